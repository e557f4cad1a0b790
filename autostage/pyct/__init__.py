"""pyct: a generic Python code-transformation toolkit (parsing, templates, loading, analyses).

It knows nothing about staging: it may import only the standard library and gast.
"""
