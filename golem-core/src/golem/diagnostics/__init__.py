"""Stage 4, diagnostics: audit, Grad-CAM examination, network summaries and evaluation against baselines."""
