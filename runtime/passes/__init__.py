"""IR passes run before lowering: dead code, common subexpressions, constants, fusion."""
