"""Dynamic-dispatch functions that converted code calls (control flow, logical ops, builtins)."""
