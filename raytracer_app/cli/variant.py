"""`raytracer-app variant new TARGET --from VARIANT FILE`: write a built-in GPU variant out as a variant file
(docs/user-variants.md) to edit and run with `bench TARGET --variant-file FILE`."""

from __future__ import annotations


def add_parser(sub) -> None:
    from kernels.registry import ALGORITHMS

    variant = sub.add_parser("variant", help="your own variants: write a built-in one out as a file to edit")
    actions = variant.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=sub._parser_class)
    new = actions.add_parser("new", help="write a runnable copy of a built-in GPU variant as a variant file")
    new.add_argument("target", metavar="TARGET", choices=[a.name for a in ALGORITHMS if a.user is not None],
                     help="the algorithm: " + ", ".join(a.name for a in ALGORITHMS if a.user is not None))
    new.add_argument("--from", dest="source", required=True, metavar="VARIANT",
                     help="the built-in GPU variant to copy (see bench TARGET --list)")
    new.add_argument("--name", default=None, help="the NAME the file declares (default my-VARIANT)")
    new.add_argument("file", metavar="FILE", help="where to write it (an existing file's old text is kept as FILE.~N~)")


def run(args) -> int:
    from kernels.user_variants import templates

    templates.source(args.target, args.source, args.name)  # a bad --from or --name: one line, nothing written
    written = templates.write(args.target, args.source, args.file, args.name, "FILE")
    if written.backup is not None:
        print(f"{args.file} existed: its old text is kept as {written.backup}")
    print(f"wrote {written}: {args.target} variant {args.name or 'my-' + args.source}, a copy of {args.source}; "
          f"run it with: raytracer-app bench {args.target} --variant-file {args.file}")
    return 0
