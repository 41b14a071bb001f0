"""Optimizer prompts built to a token budget (docs/design.md, "Optimizer prompts").

The core is pure and model-agnostic, so it cannot ask a backend's tokenizer how long a prompt
is. It estimates instead, on the safe side: `estimate_tokens` counts a token for every run of
letters (plus one per 8 letters of a long word), every digit, every other ASCII symbol, every
run of white space that does not lead into a word, and two for every non-ASCII character.
Against the Qwen2.5 and SmolLM2 tokenizers (byte-level BPE, digits split one by one) it
over-counts English prose by 20-40% and is within a few percent above on the worst inputs we
measured (hex ids, digit lists, JSON, LaTeX); Claude's tokenizer needs fewer tokens than either
on such text. A prompt that fits its estimated budget therefore fits the real one.

A prompt is a sequence of `Part`s: fixed text, or a list of items the prompt can do without.
`fit` drops items, least important first, until the estimate fits the budget, and writes into
the prompt what it left out, so the optimizer knows that it sees a shortened view.
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import field, frozen

# The estimate was first written as regular expressions over the text, one findall each:
#   words      [A-Za-z]+           one token each, plus one per 8 letters in all
#   capitals   [A-Z]{2,}           one per 3 letters in all such runs
#   symbols    [!-/0-9:-@\[-`{-~]  one each (digits and ASCII punctuation)
#   loose      \s{2,}|\s(?![A-Za-z])  one per run of white space that does not lead into a word
#   non-ASCII  [^\x00-\x7f]        two each
# Those scans were the largest item of the core's time, so the same counts are now taken in C
# over whole strings: the text is encoded as UTF-8 (a non-ASCII character becomes bytes >= 0x80,
# none of them a letter, digit, symbol or ASCII space); bytes.translate marks each byte of one
# class with a 1; int.from_bytes makes that a bit mask (one byte per character), and shifting
# it by a byte lines each character up with its neighbour, so run starts, runs of one and
# characters next to their like are a few integer operations and a bit count. The results are
# the same integers (property_tests/test_prompt_budget_props.py checks them against the
# expressions), and they must be: the estimate decides what a prompt leaves out.

# What \s matches beyond ASCII (str.isspace); property_tests/test_prompt_budget_props.py checks
# this list against `re` on every code point of the running Python.
WIDE_SPACES = ("\x85", "\xa0", "\u1680", *map(chr, range(0x2000, 0x200B)), "\u2028", "\u2029",
               "\u202f", "\u205f", "\u3000")
ASCII_SPACES = b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f "
_UPPER = bytes(range(ord("A"), ord("Z") + 1))
_LETTERS = _UPPER + bytes(range(ord("a"), ord("z") + 1))
_SYMBOLS = bytes(range(0x21, 0x7F)).translate(None, _LETTERS)


def _marks(members: bytes) -> bytes:
    """A bytes.translate table: 1 for the members, 0 for every other byte."""
    return bytes(int(b in members) for b in range(256))


_IS_LETTER = _marks(_LETTERS)
_IS_UPPER = _marks(_UPPER)
_IS_SPACE = _marks(ASCII_SPACES)
_NOT_SYMBOL = bytes(b for b in range(256) if b not in _SYMBOLS)
_NON_ASCII = bytes(range(0x80, 0x100))


def _mask(raw: bytes, marks: bytes) -> int:
    return int.from_bytes(raw.translate(marks), "little")  # character i is byte i


def estimate_tokens(text: str) -> int:
    """A conservative token count of `text` (see the module's docstring)."""
    wide = 0
    ascii_only = text.isascii()
    if not ascii_only:
        for space in WIDE_SPACES:  # as " " they join the ASCII white space
            if space in text:
                wide += text.count(space)
                text = text.replace(space, " ")
    raw = text.encode("utf-8", "surrogatepass")
    # the ASCII bytes left are the ASCII characters, and the wide spaces that became " "
    non_ascii = 0 if ascii_only else len(text) - len(raw.translate(None, _NON_ASCII)) + wide
    letters, upper, spaces = (_mask(raw, m) for m in (_IS_LETTER, _IS_UPPER, _IS_SPACE))
    # `x << 8` puts each character's bit on the next character, `x >> 8` on the previous one
    words = letters & ~(letters << 8)  # letters after a non-letter: run starts
    space_runs = spaces & ~(spaces << 8)
    # a run of one space right before a letter merges into the word; any other run does not
    merged = space_runs & (letters >> 8)
    capitals = upper & (upper << 8 | upper >> 8)  # capitals in runs of two or more
    return (
        words.bit_count()
        + letters.bit_count() // 8
        + capitals.bit_count() // 3
        + len(raw.translate(None, _NOT_SYMBOL))
        + space_runs.bit_count() - merged.bit_count()
        + 2 * non_ascii
    )


@frozen(kw_only=True)
class Part:
    """A piece of a prompt. `items` are the droppable entries (each ends without a newline);
    the first `keep` go only when nothing else is left to drop (and never the first of them);
    `rank` orders what goes first (lower = dropped earlier);
    `oldest_first` drops from the front (history rows) instead of the back (failures)."""

    text: str = ""  # fixed text, printed before the items
    items: tuple[str, ...] = field(default=(), converter=tuple)
    keep: int = 0
    rank: int = 0
    name: str = ""  # what the items are, for the note ("solved examples")
    oldest_first: bool = False
    # what each item shows (a sample id), aligned with `items`: `Fitted.kept` reports the
    # keys of the items that stayed, so a caller need not search the text for them
    keys: tuple[str, ...] = field(default=(), converter=tuple)
    # the "(N left out)" line after the items (a newest-first list loses its tail)
    note_last: bool = False

    def render(self, items: Sequence[str], dropped: int) -> str:
        note = [f"({dropped} {self.name} left out to fit the prompt budget)"] if dropped else []
        head = [self.text] if self.text else []
        if self.note_last:
            return "\n".join([*head, *items, *note])
        return "\n".join([*head, *note, *items])


@frozen(kw_only=True)
class Fitted:
    text: str
    tokens: int  # the estimate of `text`
    dropped: tuple[tuple[str, int], ...] = ()  # (part name, items left out), in drop order
    kept: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (part name, keys of the kept items)

    def kept_keys(self, name: str) -> tuple[str, ...]:
        return next((keys for part, keys in self.kept if part == name), ())


def fit(parts: Sequence[Part], budget: int, *, separator: str = "\n\n") -> Fitted:
    """Join the parts, leaving out droppable items (lowest rank first) until the estimate of the
    whole prompt is at most `budget`; a shortened prompt starts with a note saying what was left
    out. What cannot be dropped always stays, so a budget smaller than the fixed parts gives a
    prompt over budget (`Fitted.tokens` says by how much)."""
    kept = [list(p.items) for p in parts]
    keys = [list(p.keys) for p in parts]
    dropped = [0] * len(parts)
    order = sorted(range(len(parts)), key=lambda k: parts[k].rank)

    def render() -> str:
        texts = [part.render(kept[k], dropped[k]) for k, part in enumerate(parts)]
        what = ", ".join(f"{dropped[k]} {parts[k].name}" for k in order if dropped[k])
        if what:
            texts.insert(0, f"Note: this prompt was shortened to fit a budget of about "
                            f"{budget:,} tokens; left out: {what}.")
        return separator.join(t for t in texts if t)

    def drop_one(k: int) -> int:
        """Drop the next item of part k; the tokens that saves, less a new note's cost."""
        note = _NOTE_TOKENS if dropped[k] == 0 else 0
        index = 0 if parts[k].oldest_first else len(kept[k]) - 1
        dropped[k] += 1
        if keys[k]:
            keys[k].pop(index)
        return estimate_tokens(kept[k].pop(index)) + 1 - note

    # A first pass on per-item estimates (the estimate is additive up to a token per join),
    # then exact checks of the whole text: re-estimating after every drop would cost a full
    # pass over the prompt per item.
    text = render()
    tokens = estimate_tokens(text)
    excess = tokens - budget
    for k in order:
        while excess > 0 and len(kept[k]) > parts[k].keep:
            excess -= drop_one(k)
    if any(dropped):  # else the text is the one just estimated
        text = render()
        tokens = estimate_tokens(text)
    # Then item by item on the exact estimate; as a last resort a part gives up even the items
    # it keeps, down to one: the budget is what the model's context can hold.
    for floor in (lambda part: part.keep, lambda part: min(part.keep, 1)):
        while tokens > budget:
            k = next((k for k in order if len(kept[k]) > floor(parts[k])), None)
            if k is None:
                break
            drop_one(k)
            text = render()
            tokens = estimate_tokens(text)
    done = tuple((parts[k].name, dropped[k]) for k in order if dropped[k])
    shown = tuple((part.name, tuple(keys[k])) for k, part in enumerate(parts) if part.keys)
    return Fitted(text=text, tokens=tokens, dropped=done, kept=shown)


_NOTE_TOKENS = 48  # the top note's share and the "(N ... left out ...)" line of a part


KEEP_FAILURES = 3  # "failures beyond the first few" are the last thing a prompt gives up


def repair_room(total: int) -> int:
    """Tokens a first prompt leaves free for a repair turn (the unusable reply, clipped, and the
    request to answer again): an eighth of the budget, at most 512."""
    return min(512, total // 8)


def turn_budget(total: int, system: str, *, repairable: bool = True) -> int:
    """What the first user turn of an optimizer request may use out of the `total` prompt
    budget (`Config.prompt_tokens`): the total less the system prompt and, for calls that may
    be repaired, the repair room."""
    room = repair_room(total) if repairable else 0
    return max(total - estimate_tokens(system) - room, 1)


def clip_to_tokens(text: str, tokens: int, marker: str = " …(clipped)") -> str:
    """The longest head of `text` whose estimate, with `marker`, is at most `tokens`."""
    if estimate_tokens(text) <= tokens:
        return text
    low, high = 0, len(text)
    while low < high:  # the estimate of a head grows with its length, up to a token
        mid = (low + high + 1) // 2
        if estimate_tokens(text[:mid] + marker) <= tokens:
            low = mid
        else:
            high = mid - 1
    return text[:low] + marker
