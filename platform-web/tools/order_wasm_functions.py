#!/usr/bin/env python3
"""Orders a wasm module's functions so that similar ones sit next to each other.

Usage: order_wasm_functions.py IN.wat OUT.wat

IN.wat is the module as binaryen's wasm-dis prints it; OUT.wat is the same module with its
function definitions in another order (wasm-as assembles it). Calls, the table, exports and
the start function name functions by name in the text, so only the function indices change:
the code is the same, instruction for instruction.

Why: gzip (deflate) finds repeats only within its 32 KB window. The linker lays functions
out in no order that helps it; with similar functions (the policy-invokers of lambdas with
like signatures, the JSON builders, the per-type container code) next to each other, more
of each function is a back-reference to the one before it.

The order: first the functions called from the most call sites, as many as still get a
one-byte index after the imported functions (their calls stay one byte shorter); then,
starting with the smallest of the others, each time the function whose instruction 3-grams
overlap most (Jaccard) with the last one placed. Names stay in the 3-grams: a call keeps
its target (the same index in both functions whatever the order) and locals are numbered.
The choice depends on the text alone, so the order is the same on every run.
"""
import re
import sys
from collections import Counter

GRAM = 3
SKETCH_BITS = 1 << 14


def split_module(lines):
    """(lines before the first function, the functions' lines, the lines after the last)."""
    head, funcs, tail = [], [], []
    current = None
    for line in lines:
        if line.startswith(' (func '):
            current = [line]
            funcs.append(current)
        elif line.startswith(' (') or line == ')':
            current = None
            (tail if funcs else head).append(line)
        elif current is not None:
            current.append(line)
        elif line.strip() == '' or (line.startswith('(module') and not funcs):
            (tail if funcs else head).append(line)
        else:
            sys.exit(f'order_wasm_functions: unexpected top-level line: {line[:80]!r}')
    if any(line.startswith(' (func ') for line in tail):
        sys.exit('order_wasm_functions: functions are not one contiguous run')
    return head, funcs, tail


def func_name(func):
    return func[0].split()[1]


def sketch(func):
    """The function's instruction 3-grams (its words, three at a time) as a bit set."""
    words = ' '.join(line.strip() for line in func[1:]).split()
    bits = 0
    for i in range(max(1, len(words) - GRAM + 1)):
        bits |= 1 << (hash_words(words[i:i + GRAM]) % SKETCH_BITS)
    return bits


def hash_words(words):
    # FNV-1a over the text: Python's hash() of str differs per process.
    h = 2166136261
    for byte in ' '.join(words).encode():
        h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
    return h


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: order_wasm_functions.py IN.wat OUT.wat')
    with open(sys.argv[1], encoding='utf-8') as f:
        lines = f.read().split('\n')
    head, funcs, tail = split_module(lines)
    if not funcs:
        sys.exit('order_wasm_functions: no functions found')
    imported = sum(1 for line in head if line.startswith(' (import ') and '(func ' in line)
    text = '\n'.join(lines)
    calls = Counter(re.findall(r'\(call (\$[^\s()]+)', text))

    position = {id(f): i for i, f in enumerate(funcs)}
    by_calls = sorted(funcs, key=lambda f: (-calls[func_name(f)], position[id(f)]))
    hot_count = max(0, 128 - imported)
    hot, rest = by_calls[:hot_count], by_calls[hot_count:]

    sketches = [sketch(f) for f in rest]
    sizes = [s.bit_count() for s in sketches]
    current = min(range(len(rest)), key=lambda i: (sizes[i], i))
    unused = [i for i in range(len(rest)) if i != current]
    order = [current]
    while unused:
        cs = sketches[current]
        best, best_score = None, -1.0
        for j in unused:
            shared = (cs & sketches[j]).bit_count()
            score = shared / (sizes[current] + sizes[j] - shared + 1)
            if score > best_score:
                best, best_score = j, score
        order.append(best)
        unused.remove(best)
        current = best

    ordered = hot + [rest[i] for i in order]
    assert len(ordered) == len(funcs)
    with open(sys.argv[2], 'w', encoding='utf-8') as f:
        f.write('\n'.join(head + [line for func in ordered for line in func] + tail))


if __name__ == '__main__':
    main()
