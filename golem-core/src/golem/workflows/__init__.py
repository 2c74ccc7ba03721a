"""Workflows above the stages: recording, human intervention, DAgger and threshold tuning.

A workflow drives the stages below it (data, learning, runtime, diagnostics);
no stage imports a workflow. The import contract in the suite checks this.
"""
