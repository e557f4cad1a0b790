"""One module per AST-to-AST conversion pass; the pipeline order lives in one place."""
