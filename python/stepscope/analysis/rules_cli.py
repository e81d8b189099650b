"""`stepscope rules RUN --custom FILE.py ...` hands over to this module so user rules written in
Python run in the same driver as the built-in ones: same windows, same outputs.

    /usr/bin/python3 -m stepscope.analysis.rules_cli RUN --custom my_rules.py [--rule R.P=V]...
        [--only R1,R2] [--out DIR] [--json]
"""

import argparse
import json
import os
import sys

from stepscope.analysis._rules import load_rules_file, run_rules


def main(argv=None):
    parser = argparse.ArgumentParser(prog="stepscope rules", description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--custom", action="append", default=[], help="a Python file of custom rules")
    parser.add_argument("--rule", action="append", default=[], help="RULE.PARAM=VALUE")
    parser.add_argument("--only", default="", help="comma-separated built-in rules to run")
    parser.add_argument("--out", default=None, help="output directory (default RUN/rules)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        custom = [rule for path in args.custom for rule in load_rules_file(path)]
        only = [name for name in args.only.split(",") if name]
        out = args.out or os.path.join(args.run, "rules")
        document = run_rules(args.run, custom, args.rule, only, out, problems_prefix="stepscope rules: ")
    except (OSError, ValueError, SyntaxError, ImportError) as error:
        print(f"stepscope rules: {error}", file=sys.stderr)
        return 1
    if args.json:
        json.dump(document, sys.stdout, indent=2)
        print()
        return 0
    print(f"{'rule':<28} {'triggered':>9} {'violations':>10} {'datapoints':>10}  finding")
    for rule in document["rules"]:
        finding = rule["findings"][0]["title"] if rule.get("findings") else ""
        print(f"{rule['Rule']:<28} {rule['RuleTriggered']:>9} {rule['Violations']:>10} {rule['Datapoints']:>10}  "
              f"{finding[:40]}")
    print(f"status: {document['status']}; outputs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
