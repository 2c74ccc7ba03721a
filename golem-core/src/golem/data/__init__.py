"""Stage 1, data: the LMDB trajectory store, sequence windows, samplers and inspection."""
