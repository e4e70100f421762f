#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""What a hook that is off costs, read from the machine code, not timed.

Usage: bench/hook-cost.py STOCK_OBJ_DIR PATCHED_OBJ_DIR OBJECT... > report

For every function of the patched objects that reaches the hooks (a
relocation against a swapcache_ab_* symbol), disassemble it in the stock
and in the patched object (objdump -dr, same compiler, same config but
CONFIG_SWAPCACHE_AB_HOOKS) and compare the instruction sequences with
addresses, offsets and symbol offsets masked.  
The mainline path is what is reachable from the function's entry with
every static branch (listed in __jump_table) taken as the NOP it is while
its key is off.  Per function the report gives its length in stock and
patched, the static branches the series added to it, and the instructions
the two paths do not share: what the compiler changed on the path every
swap-out, writeback and fault runs (spills, a lost inline, a moved check).
The instruction diff of each function follows, for review.
"""
import difflib
import os
import re
import subprocess
import sys

HOOK_SYMBOL = re.compile(r'swapcache_ab_\w+')
SECTION = re.compile(r'^Disassembly of section (\S+):$')
FUNC = re.compile(r'^([0-9a-f]+) <([^>]+)>:$')
INSN = re.compile(r'^\s*([0-9a-f]+):\s+(\S.*)$')
RELOC = re.compile(r'^\s*([0-9a-f]+): (R_X86_64_\w+)\s+(\S+)$')
BRANCH = re.compile(r'^(j\w+)\s+([0-9a-f]+) <')


class Insn:
    def __init__(self, off, text):
        self.off, self.text, self.relocs = off, text, []


def jump_labels(obj):
    """{(section, offset of a static branch): offset of its target}"""
    out = subprocess.run(['objdump', '-r', '-j', '__jump_table', obj],
                         capture_output=True, text=True).stdout
    fields = {}
    for line in out.splitlines():
        m = re.match(r'^([0-9a-f]+) R_X86_64_PC32\s+(\S+)\+0x([0-9a-f]+)$', line)
        if m:
            fields[int(m.group(1), 16)] = (m.group(2), int(m.group(3), 16))
    sites = {}
    # struct jump_entry: code, target (32-bit, PC-relative), key (64-bit)
    for entry in range(0, max(fields, default=-16) + 16, 16):
        if entry in fields and entry + 4 in fields:
            (sec, code), (_, target) = fields[entry], fields[entry + 4]
            sites[(sec, code)] = target
    return sites


def disassemble(obj):
    """{function: (section, [Insn])}"""
    out = subprocess.run(['objdump', '-dr', '--no-show-raw-insn', obj],
                         check=True, capture_output=True, text=True).stdout
    funcs, section, name = {}, None, None
    for line in out.splitlines():
        m = SECTION.match(line)
        if m:
            section, name = m.group(1), None
            continue
        m = FUNC.match(line)
        if m:
            name = m.group(2)
            funcs[name] = (section, [])
            continue
        if name is None:
            continue
        m = RELOC.match(line)
        if m:
            if funcs[name][1]:
                funcs[name][1][-1].relocs.append(m.group(3))
            continue
        m = INSN.match(line)
        if m:
            funcs[name][1].append(Insn(int(m.group(1), 16), m.group(2).strip()))
    return funcs


def mainline_path(section, insns, sites):
    """The instructions reachable from the entry with every static key off.

    A static branch is a NOP then (objtool writes it so in the image; in
    the object it is still the jmp to its target): fall through it.  Calls
    return; ret, ud2, int3 and jumps out of the function (tail calls,
    returns through thunks) end a path.
    """
    index = {insn.off: i for i, insn in enumerate(insns)}
    seen, todo = set(), [0] if insns else []
    while todo:
        i = todo.pop()
        if i in seen or i >= len(insns):
            continue
        seen.add(i)
        insn = insns[i]
        if (section, insn.off) in sites:
            todo.append(i + 1)
            continue
        if re.match(r'(ret|ud2|int3)\b', insn.text):
            continue
        m = BRANCH.match(insn.text)
        if m and not insn.relocs:
            target = index.get(int(m.group(2), 16))
            if target is not None:
                todo.append(target)
            if m.group(1) != 'jmp':
                todo.append(i + 1)
            continue
        if re.match(r'jmp\b', insn.text):
            continue
        todo.append(i + 1)
    return sorted(seen)


def normalise(insn, section, sites):
    """An instruction without what moves when code around it changes"""
    if (section, insn.off) in sites:
        return 'static branch (NOP)'
    text = re.sub(r'\s+#.*$', '', insn.text)
    text = re.sub(r'\b[0-9a-f]+ <([^>+]+)(\+0x[0-9a-f]+)?>', r'<\1>', text)
    text = re.sub(r'0x[0-9a-f]+', 'IMM', text)
    text = re.sub(r'\s+', ' ', text)
    return text + ''.join(' @' + re.sub(r'[+-]0x[0-9a-f]+$', '', r) for r in insn.relocs)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    stock_dir, patched_dir, objs = sys.argv[1], sys.argv[2], sys.argv[3:]
    rows, diffs = [], []
    for obj in objs:
        stock_obj, patched_obj = (os.path.join(d, obj) for d in (stock_dir, patched_dir))
        stock, patched = disassemble(stock_obj), disassemble(patched_obj)
        stock_sites, patched_sites = jump_labels(stock_obj), jump_labels(patched_obj)
        for name, (section, insns) in sorted(patched.items()):
            if not any(HOOK_SYMBOL.search(r) for insn in insns for r in insn.relocs):
                continue
            if name not in stock:
                rows.append((obj, name, None, None, len(insns), None, 0, 0))
                continue
            s_section, s_insns = stock[name]
            s_path = mainline_path(s_section, s_insns, stock_sites)
            p_path = mainline_path(section, insns, patched_sites)
            old = [normalise(s_insns[i], s_section, stock_sites) for i in s_path]
            new = [normalise(insns[i], section, patched_sites) for i in p_path]
            branches = new.count('static branch (NOP)') - old.count('static branch (NOP)')
            added = removed = 0
            lines = []
            for op, i1, i2, j1, j2 in difflib.SequenceMatcher(
                    None, old, new, autojunk=False).get_opcodes():
                if op == 'equal':
                    continue
                removed += i2 - i1
                added += j2 - j1
                lines += ['- ' + t for t in old[i1:i2]] + ['+ ' + t for t in new[j1:j2]]
            rows.append((obj, name, len(s_path), len(p_path), len(insns), branches,
                         added, removed))
            diffs.append((obj, name, lines))

    print('Hooks off: the mainline path of each hooked function, stock 6.12 vs patched')
    print('(objdump -dr of the same objects, same config and compiler; static keys off)')
    print()
    print('%-20s %-34s %6s %7s %9s %8s %s' % ('object', 'function', 'stock', 'patched',
                                              'all insns', 'branches', 'changed on the path'))
    for obj, name, n_stock, n_patched, n_all, branches, added, removed in rows:
        if n_stock is None:
            print('%-20s %-34s %6s %7s %9d %8s %s' % (obj, name, '-', '-', n_all, '-',
                                                      'new, hook side only'))
            continue
        print('%-20s %-34s %6d %7d %9d %8d +%d -%d' % (obj, name, n_stock, n_patched, n_all,
                                                       branches, added, removed))
    print()
    print('stock, patched: instructions on the mainline path (reachable from the entry')
    print('with every static branch a NOP); all insns: the patched function, hooked')
    print('blocks included; branches: static-branch NOPs the series added to the path;')
    print('changed: instructions added and removed on the path against stock (a moved')
    print('block counts as both), the new NOPs included.  Instruction diffs follow.')
    for obj, name, lines in diffs:
        print()
        print('== %s %s: %d lines differ' % (obj, name, len(lines)))
        for line in lines:
            print('   ' + line)


if __name__ == '__main__':
    main()
