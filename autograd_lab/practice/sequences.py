"""Answer forms made of several words in a given arrangement: the order in which the engine runs
the nodes of a graph, and the rows of the storage lab (shares memory? what an in-place edit does).
Typed text is read as is, so the widget's answer box works for both without quotes."""
from __future__ import annotations

import ast
import contextlib
import re

from ..format import quote
from ..i18n import _
from ..languages import norm, outcome_words
from .checking import WrongForm, safe_repr as _repr
from .choices import _truth
from .forms import Form

_SPLIT = re.compile(r"\s*(?:,|;|->|→|=>|\n)\s*")


def _norm(word: str) -> str:
    return re.sub(r"[\s\"'`]", "", str(word)).lower()


class OrderForm(Form):
    """Node names in the order they ran: ["AddBackward0", "SinBackward0", ...] or one string with
    the names separated by commas or arrows. `aliases` maps each node's label to the other words
    that name it (the tensor it belongs to, the op without its number). With `waits` (each node's
    label and the labels of the nodes it waits for), any order that names every node once, each
    after all the nodes it waits for, is right: that much is what the engine guarantees."""

    takes_text = True

    def __init__(self, labels: list[str], aliases: dict[str, list[str]], waits: dict[str, set[str]] | None = None):
        self.labels, self.waits = labels, waits
        self.words = {_norm(label): label for label in labels}
        for label, others in aliases.items():
            self.words.update({_norm(o): label for o in others})
        self.example = 'ex.check("AddBackward0, ...")'

    def read(self, answer):
        if isinstance(answer, str):
            text = answer.strip()
            text = text[1:-1] if text[:1] + text[-1:] in ("[]", "()") and text.count("(") == text.count(")") + (
                text[0] == "(") - (text[-1] == ")") else text
            items = [w.strip("\"'") for w in _SPLIT.split(text) if w.strip("\"'")]
        elif isinstance(answer, (list, tuple)):
            items = list(answer)
        else:
            raise WrongForm(_('Give the node names in order, as a list of strings or as text such as '
                              '"AddBackward0, SinBackward0, ...".'))
        order = []
        for item in items:
            if not isinstance(item, str):
                raise WrongForm(_("Give the node names as strings, in the order the engine runs them."))
            label = self.words.get(_norm(item))
            if label is None:
                raise WrongForm(_("'{item}' is not a node of this graph; the nodes are {nodes} (in some "
                                  "order).").format(item=quote(item), nodes=", ".join(sorted(self.labels))))
            order.append(label)
        return tuple(order)

    def same(self, value, target) -> bool:
        if self.waits is None or len(value) != len(target) or set(value) != set(target):
            return value == target
        return self._early(value) is None

    def _early(self, value) -> tuple[str, str] | None:
        """The first node named before one it waits for, with that one; None when none is."""
        at = {label: i for i, label in enumerate(value)}
        for i, label in enumerate(value):
            for sender in sorted((self.waits or {}).get(label, ())):
                if at.get(sender, -1) > i:
                    return label, sender
        return None

    def explain(self, value, expected) -> str | None:
        repeated = sorted({v for v in value if value.count(v) > 1})
        if repeated:
            return _("Each node runs once in one backward; you named {nodes} more than once.").format(
                nodes=", ".join(repeated))
        missing = [e for e in sorted(expected) if e not in value]
        if missing:
            return _("Some nodes are missing: {nodes}. Every node of the graph runs, the "
                     "AccumulateGrad node of each leaf that requires grad included.").format(nodes=", ".join(missing))
        if value and value[0] != expected[0]:
            return _("Backward starts from the output: the first node to run is the output's grad_fn.")
        early = self._early(value) if self.waits is not None else None
        if early:
            return _("{node} comes before {sender}, but {sender} sends it a gradient: a node runs only after "
                     "every gradient it waits for has arrived.").format(node=early[0], sender=early[1])
        return None



def _outcome(word) -> str:
    found = outcome_words().get(norm(word))  # every language's words (languages.toml)
    if found is None:
        # Translators: ok, error, silently wrong and refused are what the learner types: keep them as they are
        raise WrongForm(_("Cannot read {word} as an outcome; use one of: ok, error, silently wrong, refused.").format(
            word=quote(_repr(word))))
    return found


class RowsForm(Form):
    """One (shares memory?, outcome of an in-place edit) pair per copy, for the copies in `keys`:
    a dict {"detach()": ("yes", "error"), ...}, a list of pairs in the order asked, or text with one
    row per line (or separated by ';'): "detach(): yes, error"."""

    takes_text = True

    def __init__(self, keys: list[str]):
        self.keys = keys
        self.example = 'ex.check({"' + keys[0] + '": ("yes", "ok"), ...})'

    def _key(self, word: str) -> str:
        """The copy a word names: as the statement writes it (a.detach(), a.data, a.view(-1)), as the
        keys are written (detach(), .data) or shorter (detach, data, numpy)."""
        w = _norm(word).rstrip(":")
        w = w[2:] if w.startswith("a.") else w
        for key in self.keys:
            k = _norm(key)
            if w.lstrip(".") in (k.lstrip("."), k.rstrip("()"), k.split("(")[0], k.lstrip(".").rstrip("()"),
                                 k.rstrip("()").split(".")[-1]):
                return key
        raise WrongForm(_("'{word}' is not one of the copies asked about: {copies}.").format(
            word=quote(word), copies=", ".join(self.keys)))

    def read(self, answer):
        if isinstance(answer, str) and answer.strip()[:1] in "{[(":
            with contextlib.suppress(ValueError, SyntaxError):  # a dict typed into the widget's box
                answer = ast.literal_eval(answer.strip())
        if isinstance(answer, str):
            answer = self._parse(answer)
        if isinstance(answer, dict):
            rows = {self._key(k): v for k, v in answer.items()}
            missing = [k for k in self.keys if k not in rows]
            if missing:
                raise WrongForm(_("Give a row for every copy; missing: {copies}.").format(copies=", ".join(missing)))
            answer = [rows[k] for k in self.keys]
        if not isinstance(answer, (list, tuple)) or len(answer) != len(self.keys):
            raise WrongForm(_("Give {n} rows, one per copy in the order {copies}: each a pair (shares memory: "
                              "yes/no, outcome).").format(n=len(self.keys), copies=", ".join(self.keys)))
        read = []
        for key, row in zip(self.keys, answer, strict=True):
            if not isinstance(row, (list, tuple)) or len(row) != 2:
                raise WrongForm(_("For {key}: give a pair (shares memory: yes/no, outcome: ok, error, "
                                  "silently wrong or refused).").format(key=key))
            try:
                read.append((_truth(row[0]), _outcome(row[1])))
            except WrongForm as err:
                raise WrongForm(_("For {label}: {message}").format(label=key, message=err)) from None
        return tuple(read)

    def _parse(self, text: str):
        lines = [s for s in re.split(r"\s*[;\n]\s*", text.strip()) if s]
        rows: dict | list = {} if all(":" in s for s in lines) else []
        for line in lines:
            body = line
            if isinstance(rows, dict):
                key, body = line.rsplit(":", 1)
            words = [w for w in re.split(r"\s*,\s*", body.strip().strip("()")) if w]
            pair = tuple(words) if len(words) == 2 else tuple(body.split(None, 1))
            if isinstance(rows, dict):
                rows[key] = pair
            else:
                rows.append(pair)
        return rows

    def explain(self, value, expected) -> str | None:
        wrong = [k for k, v, e in zip(self.keys, value, expected, strict=True) if v != e]
        return _("Not right yet for: {copies}.").format(copies=", ".join(wrong)) if wrong else None
