"""Static analyses over pyct ASTs: activity, reaching definitions and liveness."""
