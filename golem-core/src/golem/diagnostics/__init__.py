"""Stage 4, diagnostics: audit and evaluation against baselines (golem-explain adds Grad-CAM and summaries)."""
