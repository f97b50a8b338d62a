"""``python -m autograd_lab``: the lab's command line. One command today:

    python -m autograd_lab course [FOLDER] [--lang zh]

copies the learners' lessons into FOLDER (``autograd_lab_course`` unless named) and, run again,
updates the lessons the learner has not changed (autograd_lab/course.py). ``-h`` says the same.
"""
from __future__ import annotations

import argparse
import sys

from .errors import LabInputError
from .i18n import _


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="python -m autograd_lab",
        description=_("autograd_lab, a Jupyter lab for PyTorch's autograd. In a notebook: %load_ext autograd_lab."))
    commands = top.add_subparsers(dest="command", metavar="COMMAND")
    course = commands.add_parser(
        "course", help=_("copy the course's lessons into a folder of yours"),
        description=_("Copy the learners' lessons into FOLDER and record what was copied. Run again, it "
                      "updates the lessons you have not changed and keeps every one you changed."))
    course.add_argument("folder", nargs="?", default="autograd_lab_course", metavar="FOLDER",
                        help=_("where the lessons go (default: autograd_lab_course, made if missing)"))
    course.add_argument("--lang", metavar="CODE",
                        help=_("the course's language: en or zh (default: the lab's language, "
                               "AUTOGRAD_LAB_LANG, else English)"))
    return top


def main(argv: list[str] | None = None) -> int:
    top = parser()
    args = top.parse_args(argv)
    if args.command is None:
        top.print_help(sys.stderr)
        return 2
    from .course import copy_course, report

    try:
        outcome = copy_course(args.folder, args.lang)
    except LabInputError as err:
        print(f"python -m autograd_lab course: {err}", file=sys.stderr)
        return 2
    print(report(outcome))
    return 0


if __name__ == "__main__":
    sys.exit(main())
