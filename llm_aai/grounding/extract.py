"""The rule-based extractor: a Think's text split into the claims ``verify`` can check.

Rules, not a model, so the same text always gives the same claims and a test can pin them.
A Think is cut into sentences; in each, health and collection claims are read from their own
words, and every object mention (a colour or colours and a type: ``yellow or green ball``,
``grey wall``, ``death zone``, ``food``) is classed by the words around it: negated (``no``,
``not visible``) gives ``not_seen``; said to be perceived (``I see``, ``there is``, ``A green
ball is at``) gives ``seen``; hedged (``must be``, ``probably``) is a belief, checked against
where the object truly is; an intention (``look for``, ``head to``) says nothing about the
world and gives no claim. A bearing (``ahead``, ``to my left``, ``-43 degrees``) or a distance
(``7.7 m``) next to the mention adds a ``bearing`` or ``distance`` claim.

A negation belongs to its own clause (sentences are cut at commas, semicolons, ``and``,
``but`` and the like): "my health went down and I have not collected anything" says health
fell. A negated mention keeps the place said with it ("no green ball on my right"), and two
negations in one clause cancel ("it is not true that there is no ball").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from llm_aai.grounding.claims import Claim

_COLOURS = (r"light blue|green|yellow|red|orange|blue|grey|gray|white|black|purple|pink|brown|"
            r"transparent|glass|clear")
_TYPE_WORDS = {
    "ball": "ball", "balls": "ball", "sphere": "ball", "spheres": "ball", "goal": "ball",
    "goals": "ball", "orb": "ball", "wall": "wall", "walls": "wall", "barrier": "wall",
    "barriers": "wall", "ramp": "ramp", "ramps": "ramp", "slope": "ramp", "tunnel": "tunnel",
    "tunnels": "tunnel", "box": "box", "boxes": "box", "block": "box", "blocks": "box",
    "crate": "box", "cube": "box", "cubes": "box", "pillar": "box", "pillars": "box",
    "zone": "zone", "zones": "zone", "lava": "zone", "pit": "zone",
}
_MENTION = re.compile(
    rf"\b(?:(?P<colours>(?:{_COLOURS})(?:\s*(?:,|/|or|and|,\s*or|,\s*and)\s*(?:{_COLOURS}))*)"
    rf"(?:[\s-]+(?:coloured|colored|glass))?\s+(?P<type>{'|'.join(_TYPE_WORDS)})"
    r"|(?P<special>death\s+zones?|hot\s+zones?|lava|food|pushable\s+(?:box|block)(?:es|s)?)"
    r"|(?P<bare>balls?|spheres?|walls?|ramps?|tunnels?|boxes|box|blocks?|cubes?|pillars?|"
    r"barriers?))\b",
    re.IGNORECASE)
_SPECIAL = {"death": ("zone", "red"), "hot": ("zone", "orange"), "lava": ("zone", "red"),
            "food": ("ball", "food"), "pushable": ("box", None)}
_NEGATION = re.compile(
    r"\b(?:no|nothing|none|neither|nor|without)\b"
    r"|\b(?:isn't|aren't|is\s+not|are\s+not)\s+(?:an?|any|the)\b"
    r"|(?:\bnot|n't|\bcannot|\bnever|\bno longer)\s+(?:\w+\s+)?(?:see|spot|notice|find|detect|"
    r"visible|in view|in sight)\b", re.IGNORECASE)
_DOUBLED = re.compile(r"\b(?:not|n't)\s+(?:true|the case)\b", re.IGNORECASE)
"""A negation of what follows ("it is not true that there is no ball"): it undoes a "no"."""
_ONLY = re.compile(r"\b(?:nothing|none|no\s+\w+)\s+(?:but|except|other than|apart from|"
                   r"besides)\s+(?:an?\s+|the\s+|some\s+)?$", re.IGNORECASE)
"""``nothing but a wall``: the mention is the one thing seen, not a negated one."""
_FAR = r"(?:too\s+|very\s+|that\s+|so\s+)?far\b"
_NOT_FAR = rf"not\s+{_FAR}"
"""``not far``: near, a place rather than a negation."""
_CONJOINED = re.compile(r"^\W*(?:and|or|as well as|plus)?\s*(?:an?|the|some|two|three)?\s*"
                        r"(?:\w+\s+)?$", re.IGNORECASE)
_ACTION_CUT = re.compile(r"\b(?:I|I'll|I'm|we|so|then|turn\w*|move|go|drive|walk|head\w*)\b"
                         r"|[;:]")
_BELIEF_AFTER = re.compile(
    r"^\W*(?:is|are|must|might|may|could|should|would|will)?\s*(?:still\s+)?(?:be\b|have been|"
    r"probably|likely|possibly|perhaps|somewhere)", re.IGNORECASE)
_ABSENT_AFTER = re.compile(
    rf"^\W*(?:is|are)\s+(?:not(?!\s+{_FAR})|no longer|nowhere)\b|^\W*(?:isn't|aren't)\b"
    r"|^\W*(?:has|have)\s+(?:disappeared|vanished|gone)|^\W*(?:is|are)\s+(?:out of|gone)",
    re.IGNORECASE)
_PERCEIVED = re.compile(
    r"\b(?:see|sees|seeing|saw|spot|spotted|notice|noticed|observe|observed|visible|in view|"
    r"in sight|there is|there's|there are|appears?|shows?|i can see|ahead of me is|"
    r"in front of me is|reveals?|in the (?:image|frame|view|picture))\b", re.IGNORECASE)
_LOCATED_AFTER = re.compile(
    r"^\W*(?:is|are|lies|sits|stands|remains|is still|are still)\s+"
    r"(?:now\s+|still\s+|directly\s+|slightly\s+|just\s+|about\s+|roughly\s+|approximately\s+|"
    r"far\s+|right\s+|up\s+|a\s+little\s+)*"
    r"(?:at|located|positioned|ahead|in front|to|on|behind|straight|\d|[+-]\d|around|near|"
    rf"visible|in view|in sight|left|right|{_NOT_FAR})", re.IGNORECASE)
_HEDGE = re.compile(
    r"\b(?:might|may|could|should|probably|likely|perhaps|possibly|maybe|must be|must have|"
    r"presumably|remember|earlier|previously|was|were|used to|somewhere)\b", re.IGNORECASE)
_INTENT = re.compile(
    r"\b(?:find|finding|search|searching|look for|looking for|locate|locating|reach|reaching|"
    r"head|heading|approach|approaching|get to|go to|going to|move to|toward|towards|collect|"
    r"avoid|avoiding|face|facing|aim|aiming|navigate|try|trying|want|need|will|plan|target|"
    r"targeting|explore)\b", re.IGNORECASE)
_DEGREES = re.compile(
    r"(?P<value>[+\-\u2212]?\d+(?:\.\d+)?)\s*(?:°|(?:degrees?|deg)\b)"
    r"(?:\s*(?:to\s+(?:the|my)\s+)?(?P<side>left|right))?", re.IGNORECASE)
_SIDE = re.compile(
    r"(?P<ahead>\b(?:straight|directly|dead)\s+ahead\b|\bahead\b|\bin front\b)"
    r"|(?P<behind>\bbehind\s+(?:me|us|the agent)\b|\bat my back\b)"
    r"|\b(?:to|on|towards?|at)\s+(?:the|my|our)\s+(?:far\s+)?(?P<lr1>left|right)\b"
    r"|\bslightly\s+(?:to\s+the\s+)?(?P<lr2>left|right)\b"
    r"|\b(?P<lr3>left|right)(?:\s+side|\s+of\s+(?:the\s+)?(?:centre|center|view|image|screen|"
    r"frame))\b", re.IGNORECASE)
_DISTANCE = re.compile(r"(?P<value>\d+(?:\.\d+)?)\s*(?:m|metres?|meters?|units?)\b(?!\s+of\b)",
                       re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_CLAUSE_BREAK = re.compile(r"[,;:]|\b(?:but|so|while|then|and|or)\b", re.IGNORECASE)

_HEALTH = re.compile(r"\bhealth\b", re.IGNORECASE)
_UP = re.compile(r"\b(?:increas\w*|went up|gone up|goes up|go up|rose|risen|rises|higher|"
                 r"improv\w*|gain\w*|grew|grown|boost\w*|restor\w*|replenish\w*)\b", re.IGNORECASE)
_DOWN = re.compile(r"\b(?:decreas\w*|dropp\w*|drops?|went down|gone down|goes down|go down|"
                   r"fell|fallen|falls|lower\w*|declin\w*|reduc\w*|lost|los(?:es|ing)|diminish\w*|"
                   r"dwindl\w*)\b", re.IGNORECASE)
_HEALTH_NEGATION = re.compile(r"\b(?:not|never|no longer)\b|n't\b", re.IGNORECASE)
_FROM_TO = re.compile(r"from\s+(?P<a>\d+(?:\.\d+)?)\s*(?:%|points?)?\s+to\s+(?P<b>\d+(?:\.\d+)?)",
                      re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_HEALTH_INTENT = re.compile(
    r"\b(?:to|will|would|can|could|should|need|must|might|may|if|unless|before)\s+(?:\w+\s+)?"
    r"(?:increase|decrease|drop|raise|restore|improve|lose|gain|boost|replenish|go up|"
    r"go down)\b"
    r"|'ll\b|\b(?:will|would|shall|check|confirm|see whether|see if|hope|expect)\b",
    re.IGNORECASE)
_COLLECTED = re.compile(r"\b(?:collected|the collection|picked up|ate|eaten|consumed|obtained|"
                        r"grabbed|got the)\b", re.IGNORECASE)
_MISSED = re.compile(r"\b(?:missed|failed to (?:collect|reach|get))\b", re.IGNORECASE)
_NOT_COLLECTED = re.compile(r"\b(?:not|haven't|hasn't|didn't|did not|have not|has not|"
                            r"yet to|no)\b", re.IGNORECASE)


@dataclass(frozen=True)
class _Mention:
    start: int
    end: int
    type: str
    colours: tuple[str | None, ...]


def extract(think: str) -> list[Claim]:
    """Every claim of one Think, in the order written."""
    claims: list[Claim] = []
    for sentence in _sentences(think):
        claims += _health_claims(sentence)
        reward = _reward_claims(sentence)
        claims += reward
        if not reward:
            claims += _object_claims(sentence)
    return claims


def _sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE.split(text) if part.strip()]


# -- health -----------------------------------------------------------------------------------
def _health_claims(sentence: str) -> list[Claim]:
    """A health report: the direction said in the clause of "health" or a later one.

    Each clause with one direction word gives a reading, turned round by an odd number of
    negations in that clause only; clauses that disagree make no claim.
    """
    health = _HEALTH.search(sentence)
    if not health:
        return []
    readings = []
    for start, end in _clause_spans(sentence):
        if end <= health.start():
            continue  # "I lost the ball, but my health is fine": not about health
        clause = sentence[start:end]
        up, down = _UP.search(clause), _DOWN.search(clause)
        if bool(up) == bool(down):
            continue
        flips = len(_HEALTH_NEGATION.findall(clause)) % 2 == 1
        readings.append((bool(up) != flips, start + (up or down).end()))
    if not readings or len({rising for rising, _ in readings}) > 1:
        return []
    if _HEALTH_INTENT.search(sentence[:max(health.end(), readings[0][1])]):
        return []  # a plan or a hope ("they'll increase my health"), not a report
    rising = readings[0][0]
    pair = _FROM_TO.search(sentence)
    if pair:
        values = (float(pair["a"]), float(pair["b"]))
    else:
        numbers = [float(n) for n in _NUMBER.findall(sentence)]
        values = (numbers[0], numbers[1]) if len(numbers) == 2 else None
    if values is not None:
        return [Claim("health_comparison", sentence, rising=rising, values=values)]
    return [Claim("health_trend", sentence, rising=rising)]


def _clause_spans(sentence: str) -> list[tuple[int, int]]:
    """Where each clause of a sentence starts and ends (cut at ``_CLAUSE_BREAK``)."""
    cuts = [0, *(m.start() for m in _CLAUSE_BREAK.finditer(sentence)), len(sentence)]
    return [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if sentence[a:b].strip()]


# -- reward -----------------------------------------------------------------------------------
def _reward_claims(sentence: str) -> list[Claim]:
    collected = _COLLECTED.search(sentence)
    missed = _MISSED.search(sentence)
    if not collected and not missed:
        return []
    verb = collected or missed
    before = sentence[:verb.start()]
    said = bool(collected) and not _NOT_COLLECTED.search(before[-30:])
    mentions = _mentions(sentence)
    after = [m for m in mentions if m.start >= verb.start()] or mentions
    if not after:
        return [Claim("reward", sentence, type=None, rising=said)]
    first = after[0]
    return [Claim("reward", sentence, type=first.type, colour=colour, rising=said)
            for colour in first.colours]


# -- objects ----------------------------------------------------------------------------------
def _mentions(sentence: str) -> list[_Mention]:
    found = []
    for match in _MENTION.finditer(sentence):
        if match["special"]:
            key = match["special"].split()[0].lower()
            kind, colour = _SPECIAL[key]
            colours: tuple[str | None, ...] = (colour,)
        elif match["type"]:
            kind = _TYPE_WORDS[match["type"].lower()]
            words = re.split(r"\s*(?:,\s*or|,\s*and|,|/|\bor\b|\band\b)\s*", match["colours"])
            colours = tuple(_colour_word(w) for w in words if w.strip())
        else:
            word = match["bare"].lower()
            if word in ("goal", "goals"):
                continue
            kind, colours = _TYPE_WORDS[word], (None,)
        found.append(_Mention(match.start(), match.end(), kind, colours))
    return found


def _colour_word(word: str) -> str:
    word = word.strip().lower()
    return {"gray": "grey", "glass": "transparent", "clear": "transparent"}.get(word, word)


def _object_claims(sentence: str) -> list[Claim]:
    mentions = _mentions(sentence)
    claims: list[Claim] = []
    perceived_before = False
    for number, mention in enumerate(mentions):
        previous_end = mentions[number - 1].end if number else 0
        next_start = mentions[number + 1].start if number + 1 < len(mentions) else len(sentence)
        before = sentence[previous_end:mention.start]
        only = _ONLY.search(before)
        clause_start = max((m.end() for m in _CLAUSE_BREAK.finditer(
            before[:only.start()] if only else before)), default=0)
        lead = before[clause_start:]
        after = sentence[mention.end:next_start]
        cut = _ACTION_CUT.search(after)
        context = _Context(lead, after[:cut.start()] if cut else after,
                           carried=perceived_before and clause_start > 0
                           and bool(_CONJOINED.match(lead)), only=bool(only))
        made, perceived_before = _claims_of(sentence, mention, context)
        claims += made
    return claims


@dataclass(frozen=True)
class _Context:
    """The words around a mention.

    Its clause's lead, what follows it up to an action, whether a perceiving verb carries
    over from the mention it is joined to (``I see a red ball and a wall``), and whether it is
    the one thing said to be there (``nothing but a wall``).
    """

    lead: str
    after: str
    carried: bool
    only: bool = False


def _claims_of(sentence: str, mention: _Mention, context: _Context) -> tuple[list[Claim], bool]:
    """The mention's claims, and whether it was said to be perceived (for the next one)."""
    lead, after = context.lead, context.after
    head = sentence[mention.start - len(lead):mention.end].strip()
    absent_after = _ABSENT_AFTER.search(after)
    negated = bool(_NEGATION.search(lead)) != bool(_DOUBLED.search(lead))
    if not context.only and (negated or absent_after):
        return _absent(head, lead, after, absent_after, mention), False
    side, degrees, place = _bearing(lead)
    from_after = side is None and degrees is None
    if from_after:
        side, degrees, place = _bearing(after)
    metres_match = _DISTANCE.search(after)
    located = side is not None or degrees is not None or metres_match is not None
    perceived = bool(context.carried or _PERCEIVED.search(lead) or _PERCEIVED.search(after)
                     or _LOCATED_AFTER.search(after))
    hedged = bool(_HEDGE.search(lead) or _HEDGE.search(after))
    believed = bool(_BELIEF_AFTER.search(after)) or (hedged and located)
    if _INTENT.search(lead) and not (perceived and located):
        return [], False
    if not perceived and not believed:
        return [], False
    sees = perceived and not hedged
    ends = [m.end() for m in (metres_match, place if from_after else None) if m is not None]
    span = (head + after[:max(ends)]).strip() if ends else head
    claims = []
    for colour in mention.colours:
        common = {"type": mention.type, "colour": colour, "sees": sees}
        if sees or not located:
            claims.append(Claim("seen", span, **common))
        if side is not None or degrees is not None:
            claims.append(Claim("bearing", span, side=side, degrees=degrees, **common))
        if metres_match is not None:
            claims.append(Claim("distance", span, metres=float(metres_match["value"]), **common))
    return claims, perceived


def _absent(head: str, lead: str, after: str, absent_after: re.Match | None,
            mention: _Mention) -> list[Claim]:
    """``not_seen`` claims, with the place said in the mention's own clause.

    "There is no green ball on my right" is about the right only. "I see no ..." is about
    what is in view; "the green ball is not behind me" says where it is not, seen or not.
    """
    clause = after[:next((m.start() for m in _CLAUSE_BREAK.finditer(after)), len(after))]
    side, degrees, place = _bearing(lead)
    from_after = side is None and degrees is None
    if from_after:
        side, degrees, place = _bearing(clause)
    placed = side is not None or degrees is not None
    sees = not (absent_after and placed and not _PERCEIVED.search(clause))
    ends = [m.end() for m in (absent_after, place if from_after and placed else None)
            if m is not None]
    span = (head + after[:max(ends)]).strip() if ends else head
    return [Claim("not_seen", span, type=mention.type, colour=colour, sees=sees, side=side,
                  degrees=degrees) for colour in mention.colours]


def _bearing(text: str) -> tuple[str | None, float | None, re.Match | None]:
    degrees = _DEGREES.search(text)
    side = _SIDE.search(text)
    if degrees is not None:
        value = float(degrees["value"].replace("\u2212", "-"))
        if degrees["side"]:
            value = -abs(value) if degrees["side"].lower() == "left" else abs(value)
        return None, value, degrees
    if side is None:
        return None, None, None
    if side["ahead"]:
        return "ahead", None, side
    if side["behind"]:
        return "behind", None, side
    word = (side["lr1"] or side["lr2"] or side["lr3"]).lower()
    return word, None, side
