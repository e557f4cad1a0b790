"""A tour of autostage.pyct: parse a function, rewrite it with a template, load it back.

Run: .venv/bin/python examples/toolkit_tour.py
"""

import inspect

from autostage.pyct import loader, naming, origin_info, parser, templates, unparser


def scale(xs, factor):
    out = []
    for x in xs:
        out.append(x * factor)
    return out


# 1. Parse: positions are those of this file.
node, source = parser.parse_entity(scale)
origin_info.resolve_entity(node, source, scale)
print(f"parsed {node.name} at line {node.lineno}")

# 2. Rewrite: wrap the body in a call counter, with a name that cannot collide with user names.
namer = naming.Namer.for_entity(node, scale.__globals__)
counter = namer.new_symbol("calls")
node.body = templates.replace(
    "counter[0] += 1\nbody", counter=counter, body=node.body)
node.decorator_list = []
print(unparser.unparse(node))

# 3. Load: a real file in the private cache directory, bound to this module's globals.
calls = [0]
loaded = loader.load_function(node, "scale", scale.__globals__, extra_bindings={counter: calls},
                              like=scale)
print(loaded.function([1, 2, 3], 10), "calls:", calls[0])
print("source file:", inspect.getsourcefile(loaded.function).startswith(loader.cache_dir()))

# 4. Source map: each generated line points back at the user's line.
source_map = origin_info.create_source_map(loaded.nodes, loaded.source, loaded.filename)
for loc, origin in sorted(source_map.items(), key=lambda item: item[0].lineno):
    print(f"generated line {loc.lineno} <- {origin.loc.lineno}: {origin.source_code_line.strip()}")
