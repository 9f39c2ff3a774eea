#!/usr/bin/env python3
"""Write a C file defining `const char SYMBOL[]` with each FILE's text.

Usage: embed_text.py OUTPUT SYMBOL=FILE...
accel-bench carries its OpenCL C sources this way (tools/bench/hecbench/).
"""
import sys


def literal(text):
    lines = []
    for line in text.splitlines(keepends=True):
        escaped = line.replace('\\', '\\\\').replace('"', '\\"')
        lines.append('    "' + escaped.replace('\n', '\\n') + '"')
    return '\n'.join(lines) if lines else '    ""'


def main(argv):
    out = ['/* Written by tools/bench/embed_text.py: do not edit. */']
    for pair in argv[2:]:
        symbol, path = pair.split('=', 1)
        with open(path, encoding='utf-8') as f:
            out.append('extern const char %s[];' % symbol)
            out.append('const char %s[] =\n%s;' % (symbol, literal(f.read())))
    with open(argv[1], 'w', encoding='utf-8') as f:
        f.write('\n'.join(out) + '\n')


if __name__ == '__main__':
    main(sys.argv)
