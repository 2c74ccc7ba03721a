"""Not built yet: this distribution registers nothing until its issue lands."""
