#!/usr/bin/env python3
"""Write a C file that holds <accel/kernel.h> as bytes, with its SHA-256:
the plugins supply the header to their run-time compilers (and name it in
their compiler identity) without reading the installed tree."""
import hashlib
import sys

source, output = sys.argv[1], sys.argv[2]
data = open(source, 'rb').read()
lines = ['/* Generated from include/accel/kernel.h by embed_header.py. */',
         '#include "kernel_header.h"', '',
         'const char accel__kernel_header[] = {']
for start in range(0, len(data), 16):
    lines.append('    ' + ', '.join('0x%02x' % b for b in data[start:start + 16]) + ',')
lines += ['    0x00', '};',
          'const size_t accel__kernel_header_size = %d;' % len(data),
          'const char accel__kernel_header_sha256[] = "%s";'
          % hashlib.sha256(data).hexdigest(), '']
with open(output, 'w') as out:
    out.write('\n'.join(lines))
