"""Stage 2, learning: the model spec, behavioural-cloning training, validation, checkpoints and archives."""
