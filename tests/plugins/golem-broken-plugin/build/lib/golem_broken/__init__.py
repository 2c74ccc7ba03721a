"""Deliberately broken plugins."""
