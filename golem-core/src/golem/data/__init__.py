"""Stage 1, data: the LMDB trajectory store, sequence windows and samplers, recording and inspection."""
