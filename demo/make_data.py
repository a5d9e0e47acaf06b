#!/usr/bin/env python3
"""Writes the demo's embedded data: a small synthetic English corpus and two
fine-tuning sets derived from it.

    python demo/make_data.py                  # (re)writes demo/data/
    python demo/make_data.py --check          # exit 1 if demo/data/ differs
    python demo/make_data.py --output_dir D   # writes (or with --check, compares) D

Everything is generated from the templates and word lists below with a fixed
seed (standard library only, no downloaded text), so the output is
byte-identical on every run (checked with Python 3.10 to 3.13) whatever the
hash seed.

Files (relative to the output folder):

* corpus.txt: pre-training text in google-research/bert's format, one
  sentence per line and a blank line between documents. Each document
  describes one fictional subject of one of five kinds (town, person, animal,
  ship, invention) in order: introduction, history, description, today.
* classify/{train,dev,test}.tsv: `sentence<TAB>label` with a header row; the
  label is the kind of document a corpus sentence comes from. Dev and test
  sentences come from documents that train does not use.
* squad/{train,dev}.json: SQuAD v1.1 questions on paragraphs of corpus
  documents, asked about the facts the generator put in them. Dev contexts
  come from documents that train does not use.
"""

import argparse
import json
import os
import random
import re
import sys

SEED = 1874
KINDS = ("town", "person", "animal", "ship", "invention")
DOCS_PER_KIND = 80
# Documents of each kind used by each derived set (the rest are corpus-only).
SPLIT_DOCS = {"cls_train": 30, "cls_dev": 8, "cls_test": 8, "squad_train": 16, "squad_dev": 5}
CLS_SIZES = {"train": 120, "dev": 30, "test": 30}  # sentences per kind
SQUAD_SIZES = {"train": 80, "dev": 20}  # questions per kind
MIN_WORDS, MAX_WORDS = 8, 30
MAX_SENTENCES = 30
# The section of each plan that long documents lengthen with EXTRAS.
EXTRA_SECTION = {"town": 2, "person": 2, "animal": 2, "ship": 1, "invention": 2}
DEFAULT_OUTPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def words(text):
    return text.split()


def phrases(text):
    """Word-list entries separated by '|' (entries may contain spaces)."""
    return [p.strip() for p in text.split("|") if p.strip()]


# ---------------------------------------------------------------------------
# Names built from syllables.

ONSETS = words("""al an ar as bel bran cal cas cor dal dar del dor el en es fal fen gar gel
gil hal har hel hol jor kal kel kor lan lar len lor lun mal mar mel mor nar nel nor or os
pal per quin ral ran rel ros sal sel sor tal tam tar tel tor ul val var vel vor wen wil yar
zan bren cra dra fen gro ket mir nim osk pel rav sten thal tre vas wex""")
MIDDLES = words("a e i o u ra re ri ro la le li lo na ne ni no ma me mi va ve vi ta te ti")
ENDINGS = words("""an ar en er in on or ath eth ith oth ard erd ick ock orn ern is us ax ex el
al il ow ent ast ond ung ley""")
TOWN_SUFFIXES = words("""ford wick holm by stead mere ton bury haven field gate dale moor brook
minster bridge well thorpe ham stow""")
TOWN_PREFIXES = phrases("Upper|Lower|North|South|East|West|Port|Old|Great|Little|Saint")
TOWN_SECONDS = phrases("Vale|Cross|Green|Hollow|Bay|Ferry|Heath|Mill|Fen|Mouth|Marsh|Rise")
MALE_NAMES = words("""Tomas Anton Henrik Ivo Pieter Emil Oskar Matthias Jonas Lukas Felix Aurel
Bram Casimir Dorian Edvard Florian Gideon Hugo Isak Jasper Konrad Leopold Milo Nils Otto Rafael
Silas Tobias Viktor Wendel Albert Benedikt Cornelius Daniel Elias Frederik Gustav Hans Ignaz
Jakob Karl Ludvig Magnus Nikolai Oswin Paul Roland Samuel Theo Ulrich Valentin Walter""")
FEMALE_NAMES = words("""Anna Berta Clara Dora Elise Frida Greta Hanna Ida Johanna Karin Lena
Marta Nora Olga Petra Rosa Sofia Tilde Vera Wilma Agnes Beatrix Cecilia Edith Helena Irene
Lydia Mira Ottilie Paula Ruth Selma Theresa Ursula Viola Alma Brigit Dagmar Eva Flora Gerda
Hilde Ingrid Judit Klara Lotte Magda Nadia""")
SURNAME_SUFFIXES = ["", "", "", "er", "son", "ing", "ley", "man", "ard", "ow", "en", "ke"]
LATIN_ENDINGS = words("us is ax odon ops ella ia ura ellus ina ornis ichthys")
EPITHETS = words("""minor major curtus longipes rufus niger albus palustris montanus
silvestris maritimus ornatus vulgaris gracilis robustus striatus maculatus borealis australis
lacustris fluviatilis saxatilis nocturnus cristatus pallidus velox timidus latus""")


def cap(word):
    return word[:1].upper() + word[1:]


def syllable_word(rng, parts=2):
    word = rng.choice(ONSETS)
    for _ in range(parts - 2):
        word += rng.choice(MIDDLES)
    return word + rng.choice(ENDINGS)


class Names:
    """Unique fictional names of each sort."""

    def __init__(self, rng):
        self.rng = rng
        self.used = set()

    def _unique(self, make):
        for _ in range(1000):
            name = make()
            if name not in self.used:
                self.used.add(name)
                return name
        raise RuntimeError("ran out of names")

    def town(self):
        rng = self.rng

        def make():
            base = cap(syllable_word(rng, 2))
            roll = rng.random()
            if roll < 0.45:
                return cap(
                    rng.choice(ONSETS)
                    + rng.choice("aeiou") * rng.randint(0, 1)
                    + rng.choice(TOWN_SUFFIXES)
                )
            if roll < 0.65:
                return base + " " + rng.choice(TOWN_SECONDS)
            if roll < 0.8:
                return rng.choice(TOWN_PREFIXES) + " " + base
            return cap(syllable_word(rng, 3))

        return self._unique(make)

    def word(self, parts=2):
        return self._unique(lambda: cap(syllable_word(self.rng, parts)))

    def given(self, female):
        rng = self.rng
        if rng.random() < 0.7:
            return rng.choice(FEMALE_NAMES if female else MALE_NAMES)
        stem = rng.choice(ONSETS) + rng.choice(MIDDLES)
        return cap(
            stem
            + (
                rng.choice(["na", "ra", "lle", "ine", "tha", "da"])
                if female
                else rng.choice(["n", "r", "rik", "mund", "bert", "vin", "las"])
            )
        )

    def surname(self):
        rng = self.rng
        return self._unique(
            lambda: cap(syllable_word(rng, rng.choice([2, 2, 3])) + rng.choice(SURNAME_SUFFIXES))
        )

    def person(self, female=None):
        if female is None:
            female = self.rng.random() < 0.5
        return self.given(female) + " " + self.surname()

    def genus(self):
        rng = self.rng
        return self._unique(
            lambda: cap(rng.choice(ONSETS) + rng.choice(MIDDLES) + rng.choice(LATIN_ENDINGS))
        )


# ---------------------------------------------------------------------------
# Shared word lists. A template field {x} that is not a fact of the document is
# drawn from LISTS["x"] at each use.

LISTS = {
    "month": words(
        "January February March April May June July August September October November December"
    ),
    "direction": words("north south east west northeast northwest southeast southwest"),
    "century": words("sixteenth seventeenth eighteenth nineteenth"),
    "material": phrases(
        "grey limestone|red brick|pale sandstone|dark granite|oak timber|"
        "yellow brick|slate|flint and chalk|river stone|white marble"
    ),
    "weather": phrases(
        "mild, wet winters|short, cool summers|long, dry autumns|frequent sea "
        "fogs|strong westerly winds|heavy snow in most winters|warm summers "
        "and cold nights"
    ),
    "vegetation": phrases(
        "beech woods|heather and gorse|pine forest|orchards of apple and "
        "pear|hay meadows|vineyards|birch scrub|rough sheep pasture|hop "
        "gardens|fields of rye and oats"
    ),
    "geo": phrases(
        "the Tallow Hills|a chain of low hills|the coastal marshes|a wide chalk "
        "plateau|the moors|a line of sand dunes|the old royal forest|a deep, narrow "
        "gorge|the salt flats|a broad lake"
    ),
    "disaster": phrases("great fire|flood|storm|earthquake|landslide|hurricane"),
    "fraction": phrases("half|a third|a quarter|most|two thirds|nearly all"),
    "house": phrases("timber-framed|tall, narrow|whitewashed|brick|stone|painted"),
    "roof": phrases("steep slate|red tile|thatched|copper|moss-covered|stepped"),
    "bridge": phrases("stone|brick|timber|iron|humpbacked stone|narrow packhorse"),
    "mill": phrases("water mill|paper mill|fulling mill|sawmill|tannery|brewery|dye works"),
    "work": phrases(
        "tourism and the hospitals of the region|small workshops and farming|"
        "the nearby power station|schools and offices|the timber yards and "
        "sawmills|fishing and boat repair|a large dairy cooperative|the "
        "university of the nearby city"
    ),
    "attraction": phrases(
        "the walks along the river|its well-kept old centre|the view from "
        "the castle hill|its bookshops and cafes|the spring flower market|"
        "the annual horse fair|the nature reserve on the marsh|cycling "
        "on the old railway line"
    ),
    "colour": phrases(
        "brown|grey|olive green|rust red|sandy yellow|black|silver grey|pale "
        "blue|dark chestnut|dull orange|cream"
    ),
    "colour2": phrases("white|black|yellow|bright red|pale grey|deep blue|gold|dark brown"),
    "ordinal": phrases("second|third|eldest|youngest|fourth|only"),
    "prize": phrases(
        "the gold medal of the Royal Society of Arts|an honorary doctorate|the "
        "silver cross of the province|the freedom of the city|the Meridian "
        "Prize|a state pension for life"
    ),
    "shipyard_adj": phrases("Harbour|Royal|Union|Northern|Eastfield|Crown|Anchor|Ropewalk"),
    "sea": phrases(
        "the Grey Sea|the Narrow Sea|the northern ocean|the Straits of Calder|"
        "the Inner Channel|the western gulf"
    ),
    "storm": phrases("winter gale|violent storm|thick fog|snowstorm|hurricane|night of heavy seas"),
    "relic": phrases("figurehead|bell|wheel|logbook|anchor|ship's clock|brass compass|stern board"),
}


# ---------------------------------------------------------------------------
# Template rendering with recorded spans.

FIELD = re.compile(r"\{(\w+)\}")


class Choice(tuple):
    """A template value drawn anew at each use."""


class Sentence:
    def __init__(self, text, spans, template, generic):
        self.text = text
        self.spans = spans  # field -> (start, end) of its first use
        self.template = template
        self.generic = generic  # kind not decidable from the sentence: not classified


def render(template, values, rng):
    pieces, spans, pos, offset = [], {}, 0, 0
    for match in FIELD.finditer(template):
        literal = template[pos : match.start()]
        pieces.append(literal)
        offset += len(literal)
        name = match.group(1)
        if name in values:
            value = values[name]
            if isinstance(value, Choice):
                value = rng.choice(value)
        elif name in LISTS:
            value = rng.choice(LISTS[name])
        else:
            raise KeyError(f"no value for {{{name}}} in {template!r}")
        value = str(value)
        if value[:1] in "aeiouAEIOU" and re.search(r"(^|\s)[Aa] $", literal):
            pieces[-1] = literal[:-1] + "n "
            offset += 1
        if name not in spans:
            spans[name] = (offset, offset + len(value))
        pieces.append(value)
        offset += len(value)
        pos = match.end()
    pieces.append(template[pos:])
    text = "".join(pieces)
    return cap(text), spans


# ---------------------------------------------------------------------------
# Document plans. A plan is a list of sections; a section a list of slots;
# a slot (probability, templates) gives one sentence with that probability, a
# slot ("pool", low, high, templates) gives low..high distinct sentences.
# A template starting with "~" reads like another kind's sentence out of
# context (an inventor's life reads like a person's): it stays out of the
# classification set.

GENERIC = [
    "Little is written about {ref} in the older records before the year {gen_year}.",
    "Much of what is known about {ref} comes from letters kept in an archive at {gen_town}.",
    "Several accounts of {ref} disagree on the details, and some are plainly invented.",
    "A short article about {ref} appeared in a regional newspaper in {gen_year}.",
]


def pick_section(rng, section, values, short=False, generic_rate=0.1):
    """The rendered sentences of one section. Short documents keep the
    required slots and few of the optional ones."""
    out = []
    for slot in section:
        if slot[0] == "pool":
            _, low, high, templates = slot
            count = rng.randint(low, min(high, 1) if short else high)
            chosen = rng.sample(templates, min(len(templates), count))
            chosen.sort(key=templates.index)
            out.extend((t, False) for t in chosen)
        else:
            probability, templates = slot
            if probability < 1 and short:
                probability *= 0.3
            if rng.random() < probability:
                out.append((rng.choice(templates), False))
    if out and not short and rng.random() < generic_rate:
        out.insert(rng.randint(1, len(out)), (rng.choice(GENERIC), True))
    return [render_checked(rng, t, values, generic) for t, generic in out]


def render_checked(rng, template, values, generic):
    ambiguous = template.startswith("~")
    for _ in range(10):  # drawn values may make a sentence too long: draw again
        text, spans = render(template.lstrip("~"), values, rng)
        n = len(text.split())
        if MIN_WORDS <= n <= MAX_WORDS:
            return Sentence(text, spans, template, generic or ambiguous)
    raise ValueError(f"{n} words: {text!r}")


def year_between(rng, low, high):
    return rng.randint(low, high)


def thousands(n):
    return f"{n:,}"


# --- towns -----------------------------------------------------------------

TOWN_TYPES = phrases(
    "market town|fishing town|river port|mining town|cathedral town|mill "
    "town|spa town|hill town|harbour town|garrison town"
)
TOWN_SIZES = phrases("small|quiet|busy|compact|sleepy|prosperous|modest|lively")
INDUSTRIES = [
    ("wool", "woollen cloth"),
    ("salt", "salt"),
    ("glass", "green glass bottles"),
    ("timber", "oak planks"),
    ("copper", "copper pans"),
    ("cheese", "hard cheeses"),
    ("lace", "lace collars"),
    ("rope", "hemp rope"),
    ("barley", "malt and beer"),
    ("clay", "roof tiles"),
    ("tin", "tin plates"),
    ("paper", "writing paper"),
    ("leather", "saddles and boots"),
    ("linen", "linen sheets"),
    ("iron", "nails and tools"),
    ("herring", "smoked herring"),
    ("cider", "cider"),
    ("silk", "silk ribbons"),
    ("pottery", "blue pottery"),
    ("clockmaking", "church clocks"),
]
LANDMARKS = phrases(
    "market hall|clock tower|chapel of Saint Aldric|old granary|town library|"
    "lighthouse|guildhall|covered bridge|abbey gatehouse|corn exchange|"
    "watermill|castle keep|almshouse|custom house|bell tower|theatre"
)
FOUNDER_JOBS = [
    ("monk", "built a small chapel beside the ford"),
    ("merchant", "wanted a safe place to store his goods"),
    ("fisherman", "found a sheltered landing for his boats"),
    ("knight", "was given the land as a reward for his service"),
    ("miller", "dammed the stream to power a mill"),
    ("shepherd", "drove his flocks to the summer pastures there"),
    ("ferryman", "carried travellers across the water"),
    ("abbess", "built a house for her nuns on the hill"),
]
ORIGINS = phrases(
    "fishing hamlet|river crossing|trading post|farming village|monastery "
    "estate|mining camp|toll station|ferry landing"
)
DECLINE_CAUSES = phrases(
    "river silted up and large boats could no longer reach the quay|"
    "new railway passed ten kilometres to the north|mines were "
    "exhausted|cheaper goods from abroad ruined the local workshops|"
    "harbour was damaged beyond repair by a storm"
)
FESTIVAL_ACTS = phrases(
    "the streets are decorated with lanterns|boats race on the river|"
    "bakers compete for the best loaf|bands play in the market square|"
    "children parade in paper masks|farmers show their best cattle"
)
FESTIVAL_WORDS = phrases(
    "Lantern Festival|Boat Fair|Harvest Feast|Bread Market|Summer "
    "Fair|Wool Week|Salt Day|Apple Fair|Bell Festival|Midsummer Race"
)
NICK_REASONS = [
    ("its many grey stone roofs", "the Grey Lady"),
    ("its fogs", "the Misty Town"),
    ("its many bells", "the Singing Town"),
    ("its bridges", "the Town of Bridges"),
    ("its red brick houses", "the Red Town"),
    ("its windy hill", "the Weathercock"),
    ("its old walls", "the Stone Ring"),
    ("its gardens", "the Green Purse"),
]

TOWN_PLAN = [
    # introduction
    [
        (
            1.0,
            [
                "{Name} is a {size} {town_type} in {region}, on the {bank} bank of the "
                "river {river}.",
                "{Name} is a {size} {town_type} on the river {river}, in the part of {region} "
                "that the locals call the lowland.",
                "The {town_type} of {Name} lies on the river {river} in {region}, close to {geo}.",
            ],
        ),
        (
            0.85,
            [
                "It lies {distance} from the city of {city}, on the old road to the {direction}.",
                "The town is {distance} from {city}, the capital of the province, and can be "
                "reached by road or rail.",
                "{Name} lies {distance} {direction} of {city}, at the edge of {geo}.",
            ],
        ),
        (
            0.4,
            [
                'Because of {nick_reason}, the town is often called "{nickname}" by its '
                "neighbours.",
                'People in {city} still call {Name} "{nickname}" because of {nick_reason}.',
            ],
        ),
    ],
    # history
    [
        (
            1.0,
            [
                "The town was founded in {founded_year} by {founder}, a {founder_job} who "
                "{founder_deed}.",
                "According to local tradition, {founder} founded {Name} in {founded_year}; "
                "{founder_short} was a {founder_job} who {founder_deed}.",
                "{Name} began in {founded_year} as a {origin} set up by {founder}, a "
                "{founder_job} who {founder_deed}.",
            ],
        ),
        (
            0.6,
            [
                "In its early years the settlement lived from farming and from the fish of "
                "the {river}.",
                "For two centuries it remained a {origin} of a few dozen households around a "
                "wooden church.",
                "The first stone houses of {Name} were built around the ford, where the "
                "{river} is shallow.",
            ],
        ),
        (
            1.0,
            [
                "During the {century} century {Name} grew rich from {industry}, and its "
                "{goods} were sold as far away as {far_city}.",
                "The making of {goods} became the main trade of {Name}, and merchants from "
                "{far_city} came to the town to trade.",
                "Its prosperity rested on {industry}: by the {century} century nearly every "
                "family in the town worked in that trade.",
            ],
        ),
        (
            0.55,
            [
                "In {disaster_year} a {disaster} destroyed {fraction} of the houses, and the "
                "town was rebuilt in {material}.",
                "The {disaster} of {disaster_year} left {fraction} of the town in ruins, and "
                "many families moved away to {far_city}.",
            ],
        ),
        (
            0.5,
            [
                "The railway reached {Name} in {railway_year}, and a station was built on the "
                "{direction} side of the river.",
                "A railway line to {city} opened in {railway_year}, bringing coal and visitors "
                "to the town.",
            ],
        ),
        (
            0.4,
            [
                "Trade declined after {decline_year}, when the {decline_cause}.",
                "The good years ended in {decline_year}, when the {decline_cause}.",
            ],
        ),
    ],
    # description
    [
        (
            1.0,
            [
                "The best known building in {Name} is the {landmark}, built in {landmark_year} "
                "from {material}.",
                "The {landmark}, finished in {landmark_year}, is the oldest building of the town "
                "still in use.",
                "At the centre of {Name} stands the {landmark}, which the townspeople built in "
                "{landmark_year}.",
            ],
        ),
        (
            "pool",
            1,
            5,
            [
                "Its market square is surrounded by {house} houses with {roof} roofs.",
                "A {bridge} bridge of {arches} arches crosses the {river} next to the old {mill}.",
                "To the {direction} of the town the land rises towards {geo}, covered with "
                "{vegetation}.",
                "The climate of {Name} is gentle for the region, with {weather}.",
                "The narrow streets of the old town are paved with cobbles and lined with "
                "{house} houses.",
                "A path along the {river} leads from the town centre to the ruins of an old {mill}.",
                "Many houses in the old centre still have the {roof} roofs that were typical of "
                "{region}.",
                "The parish church has a tall spire that can be seen from {distance_small} away.",
                "Around the town lie {vegetation} and, further away, {vegetation2}.",
            ],
        ),
    ],
    # today
    [
        (
            1.0,
            [
                "Today {Name} has about {population} inhabitants, many of whom work in {work}.",
                "The town now has a population of about {population}, and most people work in "
                "{work}.",
                "About {population} people live in {Name} today; the main employers are in {work}.",
            ],
        ),
        (
            0.7,
            [
                "Every {festival_month} the town holds its {festival}, when {festival_act}.",
                "The {festival} takes place each year in {festival_month}, and on that day "
                "{festival_act}.",
                "In {festival_month} {Name} celebrates the {festival}: {festival_act}.",
            ],
        ),
        (
            0.5,
            [
                "A small museum in the old {mill} tells the story of the {industry} trade.",
                "The {industry} trade has almost disappeared, but a museum in the town keeps its "
                "tools and records.",
            ],
        ),
        (
            0.45,
            [
                "Buses run every hour to {city}, and the journey takes about {minutes} minutes.",
                "Visitors come to {Name} mainly for {attraction}.",
                "In summer the town is busy with visitors who come for {attraction}.",
            ],
        ),
    ],
]


def town_values(rng, names, ctx):
    name = ctx["name"]
    job, deed = rng.choice(FOUNDER_JOBS)
    founder_female = job == "abbess" or (job not in ("monk", "knight") and rng.random() < 0.25)
    founder = names.person(founder_female)
    if founder_female:
        deed = deed.replace(" his ", " her ")
    industry, goods = rng.choice(INDUSTRIES)
    nick_reason, nickname = rng.choice(NICK_REASONS)
    founded = year_between(rng, 1050, 1600)
    vegetation = rng.choice(LISTS["vegetation"])
    km = rng.randint(6, 95)
    return {
        "Name": name,
        "ref": name,
        "base_year": founded,
        "size": rng.choice(TOWN_SIZES),
        "town_type": rng.choice(TOWN_TYPES),
        "region": ctx["region"],
        "bank": rng.choice(["left", "right", "north", "south", "east", "west"]),
        "river": ctx["river"],
        "distance": f"{km} kilometres",
        "city": ctx["city"],
        "nick_reason": nick_reason,
        "nickname": nickname,
        "founded_year": founded,
        "founder": founder,
        "founder_short": founder.split()[-1],
        "founder_job": job,
        "founder_deed": deed,
        "origin": rng.choice(ORIGINS),
        "industry": industry,
        "goods": goods,
        "far_city": ctx["far_city"],
        "disaster": rng.choice(LISTS["disaster"]),
        "disaster_year": year_between(rng, founded + 80, 1890),
        "railway_year": year_between(rng, 1840, 1905),
        "decline_year": year_between(rng, 1860, 1960),
        "decline_cause": rng.choice(DECLINE_CAUSES),
        "landmark": rng.choice(LANDMARKS),
        "landmark_year": year_between(rng, founded + 20, 1880),
        "arches": rng.choice(["two", "three", "five", "seven", "nine"]),
        "distance_small": f"{rng.randint(5, 25)} kilometres",
        "vegetation": vegetation,
        "vegetation2": rng.choice([v for v in LISTS["vegetation"] if v != vegetation]),
        "population": thousands(rng.randint(8, 190) * 100),
        "festival": ctx["town_short"] + " " + rng.choice(FESTIVAL_WORDS),
        "festival_month": rng.choice(LISTS["month"]),
        "festival_act": rng.choice(FESTIVAL_ACTS),
        "minutes": rng.choice([20, 25, 30, 35, 40, 45, 50, 55, 70, 90]),
    }


TOWN_QUESTIONS = {
    "river": [
        "Which river flows past {Name}?",
        "On what river is {Name} situated?",
        "Which river runs through {Name}?",
    ],
    "region": ["In which region is {Name} located?", "What region is {Name} part of?"],
    "distance": ["How far is {Name} from {city}?", "What distance separates {Name} and {city}?"],
    "nickname": ["What nickname has {Name} been given?", "By what nickname is {Name} known?"],
    "founded_year": [
        "In what year was {Name} founded?",
        "When was {Name} established?",
        "What is the founding year of {Name}?",
    ],
    "founder": [
        "Who founded {Name}?",
        "Who is said to be the founder of {Name}?",
        "Which person established {Name}?",
    ],
    "founder_job": [
        "What was the occupation of the founder of {Name}?",
        "What did {founder} do for a living?",
    ],
    "goods": ["What product made {Name} famous?", "What goods did {Name} sell to {far_city}?"],
    "industry": (
        "grew rich|prosperity",
        ["Which trade made {Name} wealthy?", "What was the main industry of {Name}?"],
    ),
    "disaster_year": [
        "When did the {disaster} hit {Name}?",
        "In which year was {Name} damaged by a {disaster}?",
    ],
    "railway_year": [
        "When did the railway arrive in {Name}?",
        "In what year did {Name} get its railway connection?",
    ],
    "decline_year": ["After which year did the trade of {Name} decline?"],
    "landmark": [
        "What is the most famous building in {Name}?",
        "Which building stands at the heart of {Name}?",
    ],
    "landmark_year": [
        "When was the {landmark} of {Name} built?",
        "In what year was the {landmark} in {Name} completed?",
    ],
    "population": [
        "How many people live in {Name}?",
        "What is the population of {Name}?",
        "How many inhabitants does {Name} have?",
    ],
    "festival_month": [
        "In which month is the {festival} held?",
        "When in the year does {Name} hold the {festival}?",
    ],
    "festival": [
        "What festival does {Name} celebrate?",
        "Which yearly celebration takes place in {Name}?",
    ],
    "minutes": ["How many minutes does the bus from {Name} to {city} take?"],
}


# --- people ----------------------------------------------------------------

PROFESSIONS = [
    # profession, subject, work noun, verb, effect, tool or place
    (
        "botanist",
        "botany",
        "flora",
        "published",
        "described more than 900 mountain plants",
        "a herbarium",
    ),
    (
        "composer",
        "music",
        "symphony",
        "completed",
        "was first played in the cathedral",
        "the organ loft",
    ),
    (
        "painter",
        "painting",
        "canvas",
        "painted",
        "shows fishermen mending their nets at dawn",
        "a studio by the harbour",
    ),
    (
        "astronomer",
        "mathematics",
        "star catalogue",
        "published",
        "listed the positions of 4,000 stars",
        "a small observatory",
    ),
    (
        "architect",
        "architecture",
        "design",
        "drew",
        "was used for the new town hall",
        "a drawing office",
    ),
    (
        "poet",
        "literature",
        "collection of poems",
        "published",
        "sold out within a month",
        "a rented attic",
    ),
    (
        "engineer",
        "engineering",
        "report",
        "wrote",
        "led to the draining of the marshes",
        "the waterworks",
    ),
    (
        "surgeon",
        "medicine",
        "handbook",
        "published",
        "taught a generation of country doctors",
        "the city hospital",
    ),
    (
        "cartographer",
        "surveying",
        "atlas",
        "published",
        "mapped every parish of the province",
        "a print shop",
    ),
    (
        "geologist",
        "geology",
        "survey",
        "completed",
        "explained the origin of the coastal cliffs",
        "the mining school",
    ),
    (
        "violinist",
        "music",
        "concert tour",
        "began",
        "took {him} to twelve countries",
        "the conservatory",
    ),
    (
        "sculptor",
        "sculpture",
        "statue",
        "carved",
        "still stands in the main square",
        "a marble yard",
    ),
    (
        "chemist",
        "chemistry",
        "paper on dyes",
        "published",
        "made cheap blue dye possible",
        "a laboratory",
    ),
    (
        "novelist",
        "literature",
        "novel",
        "published",
        "tells the story of a family of boatmen",
        "a lodging house",
    ),
    (
        "historian",
        "history",
        "chronicle",
        "finished",
        "covered six hundred years of the province",
        "the state archive",
    ),
    (
        "photographer",
        "chemistry",
        "album",
        "published",
        "recorded the last years of the old harbour",
        "a darkroom",
    ),
]
TITLE_ADJ = words(
    "Quiet Silent Golden Distant Winter Northern Hidden Lost Patient Broken "
    "Open Narrow Long Bright Empty Forgotten"
)
TITLE_NOUN = words(
    "Harbour River Garden Shore Bell Mountain Road House Meadow Island Lantern "
    "Orchard Tide Valley Bridge Window"
)
PARENT_JOBS = phrases(
    "miller|schoolteacher|blacksmith|carpenter|fisherman|baker|weaver|"
    "pastor|innkeeper|shoemaker|lock keeper|customs officer|farmer|"
    "printer|cooper"
)
PERSON_LATER = [
    "In {move_year} {he} moved to {moved_to}, where {he} spent the rest of {his} working life.",
    "Later {he} settled in {moved_to}, in a house near the river, and took pupils of {his} own.",
    "From {move_year} {he} lived in {moved_to} and worked at {place}.",
]

PERSON_PLAN = [
    [
        (
            1.0,
            [
                "{Name} ({born_year}-{died_year}) was a {nationality} {profession} best known for "
                "{his} {work_noun}.",
                "{Name} was a {profession} from {region} whose {work_noun} made {him} famous in "
                "{his} lifetime.",
                "{Name} was a {nationality} {profession} who worked for most of {his} life in "
                "{moved_to}.",
            ],
        ),
        (
            0.4,
            [
                'Friends called {him} "{nick}" because of {his} {nick_reason}.',
                '{He} was known among colleagues as "{nick}", a name {he} disliked.',
            ],
        ),
    ],
    [
        (
            1.0,
            [
                "{He} was born in {born_place} in {born_year}, the {ordinal} child of a "
                "{parent_job}.",
                "{Given} was born in {born_year} in {born_place}, where {his} father worked as a "
                "{parent_job}.",
                "Born in {born_place} in {born_year}, {Given} was the {ordinal} child of a "
                "{parent_job} and his wife.",
            ],
        ),
        (
            0.6,
            [
                "As a child {he} spent long hours {childhood}.",
                "Even as a child {Given} was fond of {childhood}, and {his} parents encouraged "
                "{him}.",
                "{His} mother taught {him} to read, and {he} spent much of {his} youth "
                "{childhood}.",
            ],
        ),
        (
            1.0,
            [
                "At the age of {study_age} {he} went to {study_city} to study {subject} under "
                "{teacher}.",
                "{He} studied {subject} in {study_city}, where {his} teacher was {teacher}.",
                "In {study_year} {Given} entered the academy at {study_city}, and {teacher} "
                "taught {him} {subject}.",
            ],
        ),
        (
            0.5,
            [
                "After {his} studies {he} worked for {early_years} years as an assistant in "
                "{place}.",
                "{His} first post was in {place}, where {he} earned very little.",
            ],
        ),
        (
            1.0,
            [
                'In {work_year} {he} {work_verb} "{work_title}", a {work_noun} that {work_effect}.',
                '{His} {work_noun} "{work_title}" ({work_year}) {work_effect}.',
                '{Surname} {work_verb} "{work_title}" in {work_year}; the {work_noun} '
                "{work_effect}.",
            ],
        ),
        (
            0.6,
            [
                "In {marriage_year} {he} married {spouse}, a {spouse_job} from {spouse_town}.",
                "{He} married {spouse}, the {spouse_rel} of a {spouse_job}, in {marriage_year}.",
                "{Surname} and {his} {spouse_word} {spouse} married in {marriage_year} and had "
                "{children} children.",
            ],
        ),
        (0.7, PERSON_LATER),
        (
            0.5,
            [
                "In {prize_year} {he} received {prize} for {his} work in {subject}.",
                "{His} work earned {him} {prize} in {prize_year}.",
            ],
        ),
    ],
    [
        (
            "pool",
            0,
            3,
            [
                "{He} was a {trait} person who rarely spoke about {his} own work.",
                "{His} letters show {him} to have been {trait} and generous with younger colleagues.",
                "Portraits of {Given} show a tall figure with {hair} hair and a {trait} expression.",
                "{Surname} kept a diary for forty years, and it fills {volumes} volumes.",
                "Among {his} pupils was {pupil}, who later became a well known {profession} "
                "{pupil_self}.",
            ],
        )
    ],
    [
        (
            1.0,
            [
                "{He} died in {died_place} in {died_year} at the age of {death_age}.",
                "{Surname} died in {died_year} in {died_place}, aged {death_age}.",
                "{Given} {Surname} died at {died_place} in {died_year}, after a short illness.",
            ],
        ),
        (
            0.7,
            [
                "A street in {born_place} is named after {him}, and {his} house there is now a "
                "small museum.",
                "{His} {work_noun} is still studied today, and a prize for young {profession}s "
                "bears {his} name.",
                "The town of {born_place} has a statue of {him} in front of the school.",
                "Most of {his} papers are kept in the library of {study_city}.",
            ],
        ),
    ],
]
TRAITS = phrases(
    "shy|stubborn|cheerful|patient|restless|careful|quick-tempered|modest|serious|witty"
)
HAIR = phrases("red|dark|fair|grey|curly black|thin sandy")
CHILDHOODS = phrases(
    "drawing birds by the river|collecting stones on the beach|listening to "
    "the church organ|reading old almanacs|walking in the hills|building "
    "model boats|watching the stars from the roof|copying maps"
)
NATIONALITIES = phrases(
    "provincial|northern|southern|coastal|well travelled|self-taught|"
    "prolific|celebrated|little known"
)
PERSON_NICKS = [
    ("slow way of speaking", "the Owl"),
    ("red hair", "the Fox"),
    ("habit of working at night", "the Lamp"),
    ("great height", "the Tower"),
    ("silences", "the Stone"),
    ("quick temper", "the Kettle"),
]


def person_values(rng, names, ctx):
    female = ctx["female"]
    name = ctx["name"]
    given, surname = name.split(" ", 1)
    prof, subject, work_noun, verb, effect, place = rng.choice(PROFESSIONS)
    born = year_between(rng, 1700, 1900)
    age = rng.randint(38, 91)
    died = born + age
    he, his, him = ("she", "her", "her") if female else ("he", "his", "him")
    nick_reason, nick = rng.choice(PERSON_NICKS)
    study_age = rng.randint(14, 22)
    values = {
        "Name": name,
        "ref": name,
        "Given": given,
        "Surname": surname,
        "he": he,
        "He": cap(he),
        "his": his,
        "His": cap(his),
        "him": him,
        "himself": "herself" if female else "himself",
        "born_year": born,
        "died_year": died,
        "death_age": age,
        "base_year": born,
        "nationality": rng.choice(NATIONALITIES),
        "profession": prof,
        "subject": subject,
        "work_noun": work_noun,
        "work_verb": verb,
        "region": ctx["region"],
        "moved_to": ctx["moved_to"],
        "nick": nick,
        "nick_reason": nick_reason,
        "born_place": ctx["born_place"],
        "ordinal": rng.choice(LISTS["ordinal"]),
        "parent_job": rng.choice(PARENT_JOBS),
        "childhood": rng.choice(CHILDHOODS),
        "study_age": study_age,
        "study_year": born + study_age,
        "study_city": ctx["city"],
        "teacher": names.person(),
        "early_years": rng.choice(["two", "three", "four", "five"]),
        "place": place,
        "work_year": born + rng.randint(24, min(age - 2, 60)),
        "work_title": "The " + rng.choice(TITLE_ADJ) + " " + rng.choice(TITLE_NOUN),
        "marriage_year": born + rng.randint(20, 35),
        "spouse": names.person(not female),
        "spouse_job": rng.choice(PARENT_JOBS),
        "spouse_town": ctx["far_city"],
        "children": rng.choice(["two", "three", "four", "six"]),
        "move_year": born + rng.randint(25, 36),
        "prize": rng.choice(LISTS["prize"]),
        "prize_year": born + rng.randint(30, age - 1),
        "trait": rng.choice(TRAITS),
        "hair": rng.choice(HAIR),
        "volumes": rng.randint(6, 40),
        "pupil": names.person(),
        "died_place": ctx["died_place"],
    }
    values["work_effect"] = effect.replace("{him}", him)
    values["spouse_rel"] = "son" if female else "daughter"
    values["spouse_word"] = "husband" if female else "wife"
    pupil_female = rng.random() < 0.4
    values["pupil"] = names.person(pupil_female)
    values["pupil_self"] = "herself" if pupil_female else "himself"
    return values


PERSON_QUESTIONS = {
    "profession": [
        "What was the profession of {Name}?",
        "What did {Name} do for a living?",
        "What kind of work made {Name} known?",
    ],
    "born_year": ["In which year was {Name} born?", "When was {Name} born?"],
    "born_place": [
        "Where was {Name} born?",
        "What is the birthplace of {Name}?",
        "In which town was {Name} born?",
    ],
    "parent_job": [
        "What was the occupation of {Given}'s father?",
        "What did the father of {Name} do?",
    ],
    "study_city": ["In which city did {Name} study?", "Where did {Name} go to study?"],
    "teacher": ["Who taught {Name} {subject}?", "Who was the teacher of {Name}?"],
    "subject": ["What did {Name} study?", "Which subject did {Name} study under {teacher}?"],
    "work_title": [
        "What is the title of the {work_noun} by {Name}?",
        "Which {work_noun} did {Name} produce in {work_year}?",
    ],
    "work_year": [
        'When did {Name} produce "{work_title}"?',
        'In which year did "{work_title}" by {Name} appear?',
    ],
    "spouse": ["Whom did {Name} marry?", "Who was the spouse of {Name}?"],
    "marriage_year": ["When did {Name} marry?", "In what year did {Name} get married?"],
    "moved_to": (
        "moved to|settled in|lived in",
        ["To which town did {Name} move?", "Where did {Name} settle later in life?"],
    ),
    "prize": ["What honour did {Name} receive?", "Which award was given to {Name}?"],
    "died_place": ["Where did {Name} die?", "In which place did {Name} die?"],
    "died_year": ["In which year did {Name} die?", "When did {Name} die?"],
    "death_age": ["How old was {Name} at death?", "At what age did {Name} die?"],
    "nick": ["What nickname did {Name} have?", "What did friends call {Name}?"],
}


# --- animals ---------------------------------------------------------------

ANIMAL_CLASSES = {
    "bird": dict(
        noun="bird",
        cover="plumage",
        young="chicks",
        home="a cup-shaped nest",
        move="flies",
        heads=["finch", "warbler", "wren", "plover", "heron", "owl"],
        size="small",
        unit="centimetres",
        body="wings",
        sound="a clear, rising song",
        lay=True,
        habitats=phrases(
            "reed beds|hedgerows|mountain meadows|sea cliffs|pine forests|salt marshes"
        ),
    ),
    "fish": dict(
        noun="fish",
        cover="skin",
        young="fry",
        home="a shallow pit in the gravel",
        move="swims",
        heads=["minnow", "perch", "loach", "char", "eel", "darter"],
        size="slender",
        unit="centimetres",
        body="fins",
        sound="a faint grunt made with the swim bladder",
        lay=True,
        habitats=phrases(
            "cold mountain streams|slow rivers|deep lakes|"
            "brackish lagoons|flooded caves|river mouths"
        ),
    ),
    "mammal": dict(
        noun="mammal",
        cover="fur",
        young="pups",
        home="a burrow under tree roots",
        move="runs",
        heads=["vole", "shrew", "marten", "hare", "bat", "deer"],
        size="shy",
        unit="centimetres",
        body="back",
        sound="a sharp whistle",
        lay=False,
        habitats=phrases(
            "beech woods|rocky hillsides|wet meadows|birch forests|river banks|high moors"
        ),
    ),
    "reptile": dict(
        noun="reptile",
        cover="skin",
        young="hatchlings",
        home="a hollow in warm sand",
        move="crawls",
        heads=["lizard", "skink", "gecko", "adder", "tortoise", "slowworm"],
        size="small",
        unit="centimetres",
        body="tail",
        sound="a faint hiss",
        lay=True,
        habitats=phrases(
            "dry heaths|sunny stone walls|sand dunes|rocky slopes|scrubland|old quarries"
        ),
    ),
    "amphibian": dict(
        noun="amphibian",
        cover="skin",
        young="tadpoles",
        home="clumps of jelly among water plants",
        move="hops",
        heads=["toad", "frog", "newt", "salamander", "treefrog", "spadefoot"],
        size="small",
        unit="millimetres",
        body="belly",
        sound="a low, rattling call",
        lay=True,
        habitats=phrases("ponds|damp woodland|ditches|marsh pools|mossy streams|wet caves"),
    ),
    "insect": dict(
        noun="insect",
        cover="body",
        young="larvae",
        home="hollow plant stems",
        move="flies",
        heads=["beetle", "moth", "dragonfly", "cricket", "bee", "mantis"],
        size="small",
        unit="millimetres",
        body="head",
        sound="a soft buzzing",
        lay=True,
        habitats=phrases(
            "flower meadows|old oak woods|sandy banks|garden hedges|river shallows|chalk grassland"
        ),
    ),
}
ANIMAL_MODIFIERS = words("""marsh ridge spotted crested grey lesser greater northern banded
copper silver dusky pale hooded striped long-tailed short-eared golden ringed masked dwarf
mountain river""")
FOODS = {
    "bird": phrases(
        "seeds of grasses|small beetles|berries and insects|caterpillars|spiders|flying insects"
    ),
    "fish": phrases(
        "water fleas|insect larvae|smaller fish|freshwater shrimps|algae|worms in the mud"
    ),
    "mammal": phrases("beech nuts|roots and bulbs|earthworms|mice and voles|moths|tender leaves"),
    "reptile": phrases("grasshoppers|spiders|ants and their eggs|slugs|small lizards|fallen fruit"),
    "amphibian": phrases(
        "slugs and snails|small flies|earthworms|mosquito larvae|woodlice|spiders"
    ),
    "insect": phrases(
        "nectar of clover|pollen|aphids|rotting wood|leaves of willow|smaller insects"
    ),
}
CLUTCHES = {
    "bird": phrases("two|three|four|five|six"),
    "fish": phrases("about two hundred|several hundred|about a thousand|up to three thousand"),
    "mammal": [],
    "reptile": phrases("four|six|eight|ten|twelve"),
    "amphibian": phrases("several hundred|about a thousand|up to two thousand"),
    "insect": phrases("about fifty|about a hundred|several hundred"),
}
PREDATORS = phrases(
    "foxes|hawks|otters|herons|pike|owls|weasels|snakes|cats|crows|kingfishers|badgers"
)
STATUSES = [
    ("common", "it adapts well to farmland"),
    ("near threatened", "its wetland habitat is being drained"),
    ("vulnerable", "the old forests it needs are being cut"),
    ("endangered", "fewer than a thousand adults remain"),
    ("of least concern", "it is widespread and numerous"),
    ("rare", "it lives only in a few valleys"),
]
MEANINGS = phrases(
    "little priest|grey ghost|rain caller|stone sleeper|night walker|"
    "bell ringer|mud digger|sun watcher"
)

ANIMAL_PLAN = [
    [
        (
            1.0,
            [
                "The {common} ({sci}) is a {size} {class_noun} that lives in the {habitat} of "
                "{region}.",
                "The {common} ({sci}) is a species of {head} found in the {habitat} of {region}.",
                "The {common}, known to scientists as {sci}, is a {size} {class_noun} of the "
                "{habitat} of {region}.",
            ],
        ),
        (
            0.5,
            [
                'Its local name, "{local_name}", means "{meaning}" in the old dialect of {region}.',
                'Farmers in {region} call it "{local_name}", which means "{meaning}".',
            ],
        ),
    ],
    [
        (
            1.0,
            [
                "The species was first described in {disc_year} by the naturalist {discoverer}, "
                "who found it near {disc_place}.",
                "{discoverer} described the {common} in {disc_year} from specimens caught near "
                "{disc_place}.",
                "It was unknown to science until {disc_year}, when {discoverer} collected it near "
                "{disc_place}.",
            ],
        ),
        (
            0.4,
            [
                "For many years it was thought to be a variety of the common {head}, until "
                "careful study showed otherwise.",
                "Early collectors confused it with the {other_mod} {head}, which is larger and "
                "lives further {direction}.",
            ],
        ),
    ],
    [
        (
            1.0,
            [
                "Adults grow to about {length} long, and the females are slightly larger than "
                "the males.",
                "An adult {common} measures about {length} from head to tail.",
                "The {common} reaches a length of about {length} when fully grown.",
            ],
        ),
        (
            1.0,
            [
                "Its {cover} is {colour} with {colour2} markings on the {body_part}.",
                "The {cover} of the {common} is {colour}, and a {colour2} band runs along its "
                "{body_part}.",
                "Its {colour} {cover} hides the {common} well against the ground.",
            ],
        ),
        (
            1.0,
            [
                "The {common} feeds mainly on {food}, which it finds {forage}.",
                "Its diet consists mostly of {food}, taken {forage}.",
                "{food_cap} make up most of the food of the {common}, which hunts {forage}.",
            ],
        ),
        (
            "pool",
            1,
            4,
            [
                "It is most active {active_time}, and it spends the winter {winter}.",
                "The {common} {move} only short distances and rarely leaves its home range.",
                "Its call is {sound}, heard most often in {month}.",
                "In the breeding season the male defends a small territory against rivals.",
                "The young, called {young}, are independent after about {weeks} weeks.",
                "Groups of up to {group} animals may gather where food is plentiful.",
                "The {common} is easily disturbed and hides at the first sign of danger.",
            ],
        ),
        (
            0.8,
            [
                "The female lays {clutch} eggs in {home} in {month}.",
                "Breeding takes place in {month}, when the female lays {clutch} eggs in {home}.",
            ],
        ),
        (
            0.6,
            [
                "Its main enemies in the wild are {predator} and {predator2}.",
                "The {common} is hunted by {predator}, and its eggs are taken by {predator2}.",
            ],
        ),
        (
            0.7,
            [
                "In the wild it can live for up to {lifespan}.",
                "A {common} may live for {lifespan}, although most die much younger.",
            ],
        ),
    ],
    [
        (
            1.0,
            [
                "Today the {common} is listed as {status}, because {status_reason}.",
                "The {common} is now considered {status}, since {status_reason}.",
                "Conservation groups list the species as {status}: {status_reason}.",
            ],
        ),
        (
            0.5,
            [
                "A reserve near {disc_place} was created in {reserve_year} to protect it.",
                "Since {reserve_year} the species has been protected by law in {region}.",
                "Volunteers count the {animals} in {region} every spring.",
            ],
        ),
    ],
]
FORAGES = {
    "bird": phrases(
        "among fallen leaves|on the ground near water|in the tops of trees|"
        "along the shore at low tide"
    ),
    "fish": phrases(
        "near the bottom|among stones in fast water|in the shallows at dusk|under floating plants"
    ),
    "mammal": phrases(
        "at night along hedges|by digging in soft soil|among the roots of "
        "trees|on the edges of fields"
    ),
    "reptile": phrases(
        "in the warmest hours of the day|among dry grass|on sunny rocks|under loose bark"
    ),
    "amphibian": phrases("on wet nights|at the edge of ponds|under logs and stones|among wet moss"),
    "insect": phrases("on warm afternoons|among flowering plants|under bark|near still water"),
}


def plural(noun):
    if noun.endswith("deer"):
        return noun
    if noun.endswith(("ch", "sh", "s", "x")):
        return noun + "es"
    return noun + "s"


def animal_values(rng, names, ctx):
    cls = ctx["class"]
    info = ANIMAL_CLASSES[cls]
    head = ctx["head"]
    common = ctx["name"]
    food = rng.choice(FOODS[cls])
    predator, predator2 = rng.sample(PREDATORS, 2)
    status, status_reason = rng.choice(STATUSES)
    disc_year = year_between(rng, 1760, 1950)
    length = rng.randint(4, 60) if info["unit"] == "centimetres" else rng.randint(8, 90)
    if cls == "mammal" and head == "deer":
        length = rng.randint(80, 150)
    values = {
        "common": common,
        "ref": "the " + common,
        "sci": ctx["sci"],
        "head": head,
        "size": info["size"],
        "class_noun": info["noun"],
        "habitat": rng.choice(info["habitats"]),
        "region": ctx["region"],
        "local_name": ctx["local_name"],
        "meaning": rng.choice(MEANINGS),
        "disc_year": disc_year,
        "base_year": disc_year,
        "discoverer": names.person(),
        "disc_place": ctx["disc_place"],
        "other_mod": rng.choice([m for m in ANIMAL_MODIFIERS if m not in common.split()]),
        "length": f"{length} {info['unit']}",
        "cover": info["cover"],
        "body_part": info["body"],
        "food": food,
        "food_cap": cap(food),
        "forage": rng.choice(FORAGES[cls]),
        "active_time": rng.choice(
            [
                "at dawn and dusk",
                "at night",
                "in the early morning",
                "on warm afternoons",
                "after rain",
            ]
        ),
        "winter": rng.choice(
            [
                "hidden in deep cover",
                "in a state of rest",
                "far to the south",
                "in groups under the ice",
                "buried in mud",
            ]
        ),
        "move": info["move"],
        "sound": info["sound"],
        "young": info["young"],
        "weeks": rng.randint(3, 14),
        "group": rng.choice([5, 8, 12, 20, 40, 60]),
        "clutch": rng.choice(CLUTCHES[cls]) if info["lay"] else "no",
        "home": info["home"],
        "predator": predator,
        "predator2": predator2,
        "lifespan": f"{rng.randint(2, 25)} years",
        "status": status,
        "status_reason": status_reason,
        "reserve_year": year_between(rng, 1950, 2015),
        "animals": plural(common),
    }
    return values


def animal_plan(info):
    plan = [list(section) for section in ANIMAL_PLAN]
    if not info["lay"]:  # mammals: no eggs
        plan[2] = [slot for slot in plan[2] if not (slot[0] != "pool" and "eggs" in slot[1][0])]
        plan[2].insert(
            4,
            (
                0.8,
                [
                    "The female gives birth to {litter} {young} in {home} in {month}.",
                    "In {month} the female bears a litter of {litter} {young} in {home}.",
                ],
            ),
        )
    return plan


ANIMAL_QUESTIONS = {
    "sci": [
        "What is the scientific name of the {common}?",
        "By what Latin name do biologists know the {common}?",
    ],
    "habitat": [
        "In what kind of place does the {common} live?",
        "What is the habitat of the {common}?",
    ],
    "region": ["In which region is the {common} found?", "Where does the {common} occur?"],
    "local_name": [
        "What do people in {region} call the {common}?",
        "What is the local name of the {common}?",
    ],
    "meaning": ['What does the name "{local_name}" mean?'],
    "disc_year": [
        "When was the {common} first described?",
        "In what year was the {common} discovered by science?",
    ],
    "discoverer": [
        "Who first described the {common}?",
        "Which naturalist discovered the {common}?",
    ],
    "disc_place": [
        "Where were the first specimens of the {common} found?",
        "Near which place was the {common} first collected?",
    ],
    "length": ["How long is an adult {common}?", "What length does the {common} reach?"],
    "food": [
        "What does the {common} eat?",
        "What is the main food of the {common}?",
        "On what does the {common} mainly feed?",
    ],
    "clutch": ["How many eggs does the female {common} lay?"],
    "litter": ["How many young does a female {common} have in a litter?"],
    "lifespan": ["How long can the {common} live?", "What is the lifespan of the {common}?"],
    "status": [
        "What is the conservation status of the {common}?",
        "How is the {common} classified by conservation groups?",
    ],
    "reserve_year": ["When was the {common} given protection?"],
}


# --- ships -----------------------------------------------------------------

SHIP_TYPES = phrases(
    "brig|schooner|barque|clipper|paddle steamer|steam collier|whaler|"
    "frigate|mail steamer|ketch|fishing smack|ferry"
)
SHIP_NOUNS = words(
    "Kestrel Heron Lark Star Queen Maid Spirit Venture Promise Dawn Wanderer "
    "Courier Endeavour Fortune Rose Swallow Petrel Gannet Albatross Lily Pilgrim "
    "Comet Harvest Crown"
)
SHIP_ADJS = words(
    "Silver Golden Northern Swift Bold Gentle Morning Evening Western Patient "
    "Lucky Faithful Steadfast Merry Proud"
)
CARGOES = phrases(
    "timber|coal|wool|salt fish|grain|wine|tea|iron ore|hides|roof slates|"
    "copper ingots|whale oil|sugar|granite blocks"
)
COMPANY_WORDS = phrases(
    "Trading Company|Steam Navigation Company|Packet Line|Shipping "
    "Society|Coal Company|Fishing Company"
)
SHIP_FATES = [
    ("wrecked", "was wrecked off {fate_place} in {fate_year} during a {storm}"),
    ("sank", "sank near {fate_place} in {fate_year} after striking a rock in a {storm}"),
    ("burned", "caught fire and burned out at {fate_place} in {fate_year}"),
    ("broken up", "was sold for scrap and broken up at {fate_place} in {fate_year}"),
]

SHIP_PLAN = [
    [
        (
            1.0,
            [
                "{The_ship} was a {ship_type} built in {built_year} at the {yard} yard in "
                "{yard_town}.",
                "{The_ship} was a {ship_type} launched in {built_year} from the {yard} yard at "
                "{yard_town}.",
                "{The_ship}, a {ship_type} of the {company}, was built at {yard_town} in "
                "{built_year}.",
            ],
        ),
        (
            0.6,
            [
                'Her sailors called her "{nick}", and the name appears in several of their songs.',
                "She was the {fleet_ord} ship of the {company} and for years the pride of "
                "{home_port}.",
            ],
        ),
    ],
    [
        (
            1.0,
            [
                "She was ordered by the {company}, which traded in {cargo} between {home_port} "
                "and {destination}.",
                "The {company} ordered her to carry {cargo} from {home_port} to {destination}.",
                "Her owners, the {company}, needed a fast ship for the {cargo} trade.",
            ],
        ),
        (
            1.0,
            [
                "The ship was {length} long and could reach a speed of {speed}.",
                "She measured {length} from bow to stern and made about {speed} in good weather.",
                "With a length of {length}, she was one of the largest ships of her kind at "
                "{home_port}.",
            ],
        ),
        (
            0.8,
            [
                "Her first master was Captain {captain}, who had served for {cap_years} years "
                "in the {cargo} trade.",
                "Captain {captain} commanded her for her first {command_years} years at sea.",
                "Command was given to Captain {captain}, a veteran of {cap_years} years on {sea}.",
            ],
        ),
        (
            1.0,
            [
                "On her maiden voyage in {maiden_year} she sailed from {home_port} to "
                "{destination} with a cargo of {cargo}.",
                "Her first voyage, in {maiden_year}, took her from {home_port} to {destination} "
                "in {days} days.",
                "She left {home_port} on her first voyage in {maiden_year}, bound for "
                "{destination}.",
            ],
        ),
        (
            "pool",
            1,
            4,
            [
                "She carried a crew of {crew} men and room for {passengers} passengers below deck.",
                "In {record_year} she crossed {sea} in only {record_days} days, a record for a "
                "ship of her size.",
                "During a {storm2} in {storm_year} she lost her {lost_part} but reached port "
                "safely.",
                "In {rescue_year} her crew rescued {rescued} sailors from a sinking fishing boat "
                "on {sea}.",
                "Her hull was sheathed in copper to protect it from worms and weed.",
                "She was refitted in {refit_year}, when a new {refit} was installed.",
                "Her cargo holds could take about {tons} tons of {cargo}.",
            ],
        ),
        (
            1.0,
            [
                "{The_ship} {fate_text}.",
                "After {service} years of service she {fate_text}.",
                "Her career ended in {fate_year}, when she {fate_text_short}.",
            ],
        ),
    ],
    [
        (
            0.8,
            [
                "Her {relic} is kept today in the maritime museum at {museum_town}.",
                "The {relic} of {the_ship} survives and can be seen in {museum_town}.",
                "Divers found her {relic} in {found_year}; it is now shown in a museum at "
                "{museum_town}.",
            ],
        ),
        (
            0.4,
            [
                'A popular song, "The Ballad of the {Ship}", tells the story of her last voyage.',
                "A model of {the_ship} hangs in the church of {home_port}, where her crew once "
                "prayed.",
            ],
        ),
    ],
]


def ship_values(rng, names, ctx):
    built = year_between(rng, 1760, 1920)
    fate_kind, fate_template = rng.choice(SHIP_FATES)
    service = rng.randint(6, 45)
    fate_year = built + service
    values = {
        "Ship": ctx["ship"],
        "The_ship": "The " + ctx["ship"],
        "the_ship": "the " + ctx["ship"],
        "ref": "the " + ctx["ship"],
        "ship_type": rng.choice(SHIP_TYPES),
        "built_year": built,
        "base_year": built,
        "yard": rng.choice(LISTS["shipyard_adj"]),
        "yard_town": ctx["yard_town"],
        "company": ctx["company"],
        "fleet_ord": ctx["fleet_ord"],
        "nick": "Old "
        + rng.choice(["Lady", "Grumble", "Faithful", "Wet Boots", "Slowcoach", "Bones"]),
        "cargo": rng.choice(CARGOES),
        "home_port": ctx["home_port"],
        "destination": ctx["destination"],
        "length": f"{rng.randint(18, 95)} metres",
        "speed": f"{rng.randint(6, 17)} knots",
        "captain": names.person(False),
        "cap_years": rng.randint(4, 30),
        "command_years": rng.randint(2, max(2, service - 1)),
        "maiden_year": built + 1,
        "days": rng.randint(5, 60),
        "crew": rng.randint(8, 90),
        "passengers": rng.randint(6, 200),
        "record_year": built + rng.randint(2, max(3, service - 1)),
        "record_days": rng.randint(3, 40),
        "storm_year": built + rng.randint(1, service),
        "lost_part": rng.choice(
            ["mainmast", "rudder", "bowsprit", "two boats", "foremast", "figurehead"]
        ),
        "rescue_year": built + rng.randint(1, service),
        "rescued": rng.randint(3, 30),
        "refit_year": built + rng.randint(3, service),
        "refit": rng.choice(
            ["steam engine", "iron keel", "deckhouse", "set of sails", "boiler", "propeller"]
        ),
        "tons": thousands(rng.randint(2, 60) * 50),
        "service": service,
        "fate_year": fate_year,
        "fate_place": ctx["fate_place"],
        "fate_kind": fate_kind,
        "museum_town": ctx["museum_town"],
        "found_year": year_between(rng, 1950, 2019),
    }
    storm = rng.choice(LISTS["storm"])
    sub = {"fate_place": "{fate_place}", "fate_year": "{fate_year}", "storm": storm}
    values["fate_text"] = fate_template.format(**sub)
    short = fate_template.format(**sub).replace(" in {fate_year}", "")
    values["fate_text_short"] = short
    values["storm"] = storm
    values["storm2"] = rng.choice([s for s in LISTS["storm"] if s != storm])
    values["relic"] = rng.choice(LISTS["relic"])
    return values


def expand_nested(sentence_template, values):
    """Fate texts hold fields of their own: substitute them first. A sentence
    that opens with a pronoun opens with {Subj} instead: the pronoun or the
    subject's name, drawn at each use (see subject_values)."""
    for field in ("fate_text_short", "fate_text"):
        if field in values:
            sentence_template = sentence_template.replace("{%s}" % field, values[field])
    for opening, field in SUBJECT_OPENINGS:
        if sentence_template.startswith(opening):
            return field + sentence_template[len(opening) :]
    return sentence_template


SUBJECT_OPENINGS = (
    ("{He} ", "{Subj} "),
    ("It ", "{Subj} "),
    ("She ", "{Subj} "),
    ("Its ", "{Subjs} "),
    ("Her ", "{Subjs} "),
)


def subject_values(kind, values):
    """{Subj} / {Subjs}: a sentence-opening pronoun or the subject's name."""
    name = {
        "town": values.get("Name"),
        "person": values.get("Surname"),
        "animal": "The " + values.get("common", ""),
        "ship": values.get("The_ship"),
        "invention": values.get("The_device"),
    }[kind]
    pronoun = {
        "town": ("It", "Its"),
        "person": (values.get("He"), values.get("His")),
        "animal": ("It", "Its"),
        "ship": ("She", "Her"),
        "invention": ("It", "Its"),
    }[kind]
    return {"Subj": Choice([pronoun[0], name]), "Subjs": Choice([pronoun[1], name + "'s"])}


SHIP_QUESTIONS = {
    "ship_type": ["What type of vessel was {the_ship}?", "What kind of ship was {the_ship}?"],
    "built_year": ["When was {the_ship} built?", "In which year was {the_ship} launched?"],
    "yard_town": ["Where was {the_ship} built?", "In which town was {the_ship} constructed?"],
    "nick": ["What nickname did sailors give {the_ship}?"],
    "company": ["Which company owned {the_ship}?", "Who ordered {the_ship}?"],
    "cargo": ["What cargo did {the_ship} carry?", "What goods was {the_ship} built to carry?"],
    "length": ["How long was {the_ship}?", "What was the length of {the_ship}?"],
    "speed": ["How fast could {the_ship} sail?", "What was the top speed of {the_ship}?"],
    "captain": [
        "Who was the first captain of {the_ship}?",
        "Who commanded {the_ship} at the start of her career?",
    ],
    "destination": (
        "voyage",
        [
            "Where was {the_ship} bound on her maiden voyage?",
            "To which port did {the_ship} sail on her first voyage?",
        ],
    ),
    "home_port": (
        "voyage",
        [
            "From which port did {the_ship} set out on her first voyage?",
            "Where did the maiden voyage of {the_ship} begin?",
        ],
    ),
    "maiden_year": ["When did {the_ship} make her first voyage?"],
    "crew": ["How many crew did {the_ship} carry?", "How large was the crew of {the_ship}?"],
    "record_days": ["How many days did the record crossing of {the_ship} take?"],
    "rescued": ["How many sailors did the crew of {the_ship} rescue?"],
    "refit_year": ["When was {the_ship} refitted?"],
    "lost_part": ["What did {the_ship} lose in the {storm2} of {storm_year}?"],
    "fate_place": [
        "Where did the career of {the_ship} end?",
        "At what place did {the_ship} meet her end?",
    ],
    "fate_year": [
        "In which year did the career of {the_ship} end?",
        "When was {the_ship} lost or broken up?",
    ],
    "museum_town": ["Where can the {relic} of {the_ship} be seen today?"],
}


# --- inventions ------------------------------------------------------------

DEVICES = [
    # device, description, purpose, problem before it, part
    (
        "lamp",
        "safety lamp",
        "light the tunnels of coal mines without igniting gas",
        "miners worked by candles, and explosions were common",
        "wire gauze",
    ),
    (
        "loom",
        "weaving machine",
        "weave patterned cloth without a second worker",
        "patterned cloth needed two weavers at each loom",
        "shuttle",
    ),
    (
        "pump",
        "water pump",
        "drain flooded mines and cellars",
        "many mines were lost to rising water every spring",
        "piston",
    ),
    (
        "press",
        "printing press",
        "print maps in several colours at once",
        "coloured maps were painted by hand, sheet by sheet",
        "roller",
    ),
    (
        "kiln",
        "drying kiln",
        "dry malt and hops evenly",
        "much of the harvest rotted in damp barns",
        "grate",
    ),
    (
        "clock",
        "marine clock",
        "keep exact time at sea",
        "ships often lost their position on long voyages",
        "balance wheel",
    ),
    (
        "lens",
        "signal lens",
        "throw the beam of a lighthouse further out to sea",
        "lighthouse lamps could be seen only a few kilometres away",
        "glass prism",
    ),
    (
        "crane",
        "harbour crane",
        "lift heavy cargo from the holds of ships",
        "dock workers carried every load on their backs",
        "jib",
    ),
    (
        "still",
        "water still",
        "make sea water fit to drink",
        "ships had to carry fresh water for the whole voyage",
        "condenser coil",
    ),
    (
        "thresher",
        "threshing machine",
        "separate grain from straw",
        "grain was beaten out with flails through the winter",
        "drum",
    ),
    (
        "barometer",
        "weather glass",
        "warn fishermen of coming storms",
        "fishing boats were often caught at sea by sudden gales",
        "glass tube",
    ),
    (
        "valve",
        "safety valve",
        "stop steam boilers from bursting",
        "boiler explosions killed many workers every year",
        "spring",
    ),
    (
        "stove",
        "carriage stove",
        "heat railway carriages in winter",
        "passengers travelled wrapped in blankets and straw",
        "chimney",
    ),
    (
        "sounder",
        "depth sounder",
        "measure the depth of rivers and harbours",
        "pilots measured the depth with a weighted rope",
        "weight",
    ),
    (
        "telegraph",
        "signal telegraph",
        "send messages between hilltop stations",
        "news took days to travel between towns",
        "signal arm",
    ),
    (
        "churn",
        "butter churn",
        "make butter quickly in large dairies",
        "butter was churned by hand for hours",
        "paddle",
    ),
]
POWERS = phrases(
    "a hand crank|a falling weight|steam|a water wheel|a coiled spring|a foot "
    "treadle|a small windmill|an oil burner|a team of horses|electric cells"
)
DEVICE_MATERIALS = phrases(
    "brass|cast iron|oak|copper|steel|walnut|bronze|tin|ash wood|glass and brass"
)
GLASS_OR_WIRE = {
    False: phrases("flint glass|clear crown glass|thick green glass"),
    True: phrases("fine iron wire|brass wire|copper wire"),
}
INVENTOR_JOBS = phrases(
    "clockmaker|blacksmith|mine surveyor|schoolmaster|ship's carpenter|"
    "mill engineer|instrument maker|glassblower|tinsmith|wheelwright"
)
IMPROVEMENTS = [
    ("second cylinder", "twice as fast"),
    ("lighter frame", "easier to carry"),
    ("gear train", "quieter in use"),
    ("iron base", "much more stable"),
    ("adjustable screw", "more accurate"),
    ("glass cover", "safe from dust"),
]
REPLACEMENTS = phrases(
    "electric machines|cheaper factory models|newer designs from abroad|"
    "mass-produced copies|larger and faster machines|modern equipment"
)

INVENTION_PLAN = [
    [
        (
            1.0,
            [
                "{The_device} is a {description} invented by {inventor} in {inv_year} to "
                "{purpose}.",
                "{The_device}, a {description} designed to {purpose}, was invented by {inventor} "
                "in {inv_year}.",
                "In {inv_year} {inventor} invented {the_device}, a {description} that could "
                "{purpose}.",
            ],
        )
    ],
    [
        (
            1.0,
            [
                "Before its invention, {problem}.",
                "Until then {problem}, and the need for a better method was urgent.",
                "Its inventor knew that {problem}.",
            ],
        ),
        (
            1.0,
            [
                "~{inventor} was a {inv_job} from {inv_town} who had spent years {inv_past}.",
                "~{Inventor_surname}, a {inv_job} in {inv_town}, had earlier spent years "
                "{inv_past}.",
                "The inventor, {inventor}, worked as a {inv_job} in {inv_town}.",
            ],
        ),
        (
            0.8,
            [
                "The first working model was tested at {test_place} in {test_year}.",
                "{Inventor_surname} tested the first working model at {test_place} in "
                "{test_year}, in front of a crowd of sceptics.",
                "A trial at {test_place} in {test_year} showed that the idea worked.",
            ],
        ),
        (
            0.8,
            [
                "{Inventor_surname} received a patent for the design in {patent_year}.",
                "The design was patented in {patent_year}, after a long dispute with a rival "
                "inventor.",
                "A patent was granted to {Inventor_surname} in {patent_year}.",
            ],
        ),
    ],
    [
        (
            1.0,
            [
                "The {device} is driven by {power}, which turns a {part} made of {material}.",
                "Power comes from {power}; the moving parts, including the {part}, are made of "
                "{material}.",
                "It is powered by {power}, and its most important part is a {part} of {material}.",
            ],
        ),
        (
            "pool",
            1,
            4,
            [
                "The whole {device} weighs about {weight} and needs {operators} to work it.",
                "The case is made of {material2}, with the maker's name cut into the front.",
                "A skilled worker could assemble one {device} in about {assembly_days} days.",
                "Early models cost about {price} silver crowns, a large sum at the time.",
                "Each {device} was tested for a week before it left the workshop.",
                "The {part} must be cleaned and oiled every {service_days} days.",
                "An illustrated manual explained how to set up and repair the {device}.",
            ],
        ),
        (
            0.7,
            [
                "In {improve_year} the engineer {improver} added a {improvement}, which made the "
                "{device} {benefit}.",
                "{improver} improved the design in {improve_year} by adding a {improvement}, so "
                "that it became {benefit}.",
            ],
        ),
    ],
    [
        (
            1.0,
            [
                "By {adopt_year} more than {units} of the devices were in use in {adopt_region}.",
                "Within twenty years, {units} of them were in use across {adopt_region}.",
                "The {device} spread quickly: by {adopt_year} about {units} were working in "
                "{adopt_region}.",
            ],
        ),
        (
            0.6,
            [
                "It was slowly replaced by {replacement} after {replace_year}.",
                "After {replace_year} {replacement} took its place, and production stopped.",
            ],
        ),
        (
            0.8,
            [
                "The original model is kept in the museum of {museum_town}.",
                "The first {device} that {Inventor_surname} built is on display in {museum_town}.",
                "A working copy of {the_device} can still be seen at the museum in {museum_town}.",
            ],
        ),
    ],
]
INV_PASTS = phrases(
    "repairing pumps in the mines|building clocks for churches|working on "
    "river barges|grinding lenses|making tools for farmers|mending ship "
    "instruments|teaching arithmetic|working in a foundry"
)


def invention_values(rng, names, ctx):
    device, description, purpose, problem, part = ctx["device"]
    inv_year = year_between(rng, 1720, 1910)
    improvement, benefit = rng.choice(IMPROVEMENTS)
    inventor = ctx["inventor"]
    material, material2 = rng.sample(DEVICE_MATERIALS, 2)
    if "glass" in part or "gauze" in part:
        material = rng.choice(GLASS_OR_WIRE["gauze" in part])
    return {
        "The_device": "The " + ctx["name"],
        "the_device": "the " + ctx["name"],
        "ref": "the " + ctx["name"],
        "device": device,
        "description": description,
        "purpose": purpose,
        "problem": problem,
        "part": part,
        "inventor": inventor,
        "Inventor_surname": inventor.split()[-1],
        "inv_year": inv_year,
        "base_year": inv_year,
        "inv_job": rng.choice(INVENTOR_JOBS),
        "inv_town": ctx["inv_town"],
        "inv_past": rng.choice(INV_PASTS),
        "test_place": ctx["test_place"],
        "test_year": inv_year + rng.randint(1, 4),
        "patent_year": inv_year + rng.randint(2, 6),
        "power": rng.choice(POWERS),
        "material": material,
        "material2": material2,
        "weight": f"{rng.randint(3, 900)} kilograms",
        "operators": rng.choice(["one person", "two workers", "a crew of four"]),
        "assembly_days": rng.randint(2, 30),
        "price": rng.randint(15, 400),
        "service_days": rng.choice([7, 10, 14, 30]),
        "improve_year": inv_year + rng.randint(8, 30),
        "improver": names.person(),
        "improvement": improvement,
        "benefit": benefit,
        "adopt_year": inv_year + rng.randint(10, 30),
        "units": thousands(rng.choice([300, 800, 1200, 2500, 4000, 9000, 15000])),
        "adopt_region": ctx["adopt_region"],
        "replacement": rng.choice(REPLACEMENTS),
        "replace_year": inv_year + rng.randint(45, 110),
        "museum_town": ctx["museum_town"],
    }


INVENTION_QUESTIONS = {
    "inventor": ["Who invented {the_device}?", "Who was the inventor of {the_device}?"],
    "inv_year": ["When was {the_device} invented?", "In which year did {the_device} appear?"],
    "purpose": ["What was {the_device} designed to do?", "What was the purpose of {the_device}?"],
    "inv_job": ["What was the trade of the inventor of {the_device}?"],
    "inv_town": [
        "Where did the inventor of {the_device} come from?",
        "In which town did {inventor} live?",
    ],
    "test_place": ["Where was the first model of {the_device} tested?"],
    "test_year": ["When was the first model of {the_device} tested?"],
    "patent_year": [
        "When was {the_device} patented?",
        "In which year did {inventor} get a patent?",
    ],
    "power": ["What powers {the_device}?", "What drives {the_device}?"],
    "material": ["What is the {part} of {the_device} made of?"],
    "weight": ["How heavy is {the_device}?", "What does {the_device} weigh?"],
    "improver": [
        "Who improved {the_device}?",
        "Which engineer improved the design of {the_device}?",
    ],
    "improvement": ["What did {improver} add to {the_device}?"],
    "units": ["How many of the {device}s came into use in {adopt_region}?"],
    "adopt_region": ("in use|working in", ["Where was {the_device} widely used?"]),
    "replacement": ["What replaced {the_device}?"],
    "museum_town": [
        "Where is the original {device} of {inventor} kept?",
        "In which town can {the_device} be seen in a museum?",
    ],
}

# --- extra detail for long documents -----------------------------------------
# Long documents add several of these to their description section.

EXTRAS = {
    "town": [
        "{street} Street runs from the {landmark} down to the old quay on the {river}.",
        "In the {century} century the town was surrounded by a wall with {gates} gates, of "
        "which only one survives.",
        "The oldest family in {Name} are the {family}s, who have kept the same inn since "
        "{inn_year}.",
        "Every Saturday farmers from the surrounding villages sell {produce} in the market square.",
        "The town council meets in a room above the {landmark}, under a painted ceiling.",
        "A ferry once crossed the {river} here, and the ferryman's cottage still stands by "
        "the water.",
        "The town school was founded in {school_year} with money left by a wealthy "
        "{industry} merchant.",
        "In dry summers the {river} runs so low that children can wade across it below the "
        "old {mill}.",
        "The local dialect has many words for {dialect_topic}, a sign of the old importance "
        "of that trade.",
        "A small hospital was opened in {hospital_year} in a former {old_use} near the station.",
        "The cemetery on the hill holds the graves of many {industry} workers and their families.",
        "Maps from the {century} century show {Name} with only {streets} streets and a "
        "single church.",
        "During the war of {war_year} soldiers were quartered in the {landmark} for a whole "
        "winter.",
        "Local bakers are known for a sweet bread flavoured with {spice}, eaten on feast days.",
        "The town band, founded in {band_year}, still plays on summer evenings beside the {river}.",
        "A stone on the bridge marks the height of the great flood of {flood_year}.",
    ],
    "person": [
        "In {travel_year} {he} travelled to {travel_place}, a journey that took "
        "{travel_weeks} weeks.",
        "{He} corresponded with {colleague} for many years, and more than {letters} of "
        "their letters survive.",
        "Critics in {study_city} at first dismissed {his} {work_noun}, calling it {criticism}.",
        "Money was often short, and {he} once sold {his} {possession} to pay the rent.",
        "A serious illness in {ill_year} kept {him} from work for almost a year.",
        "{He} spoke {languages} languages and translated several books for the publishers "
        "of {study_city}.",
        '{His} second {work_noun}, "{work_title2}", was less successful but is now admired '
        "by experts.",
        "{He} spent the summer of {summer_year} in the mountains above {summer_place}, "
        "where {he} filled several notebooks.",
        "{His} brother {sibling} was a {sibling_job}, and the two wrote to each other every week.",
        "Each morning {he} walked for two hours before starting work, whatever the weather.",
        "A quarrel with {rival} over the credit for an idea lasted for {quarrel_years} years.",
        "{He} refused an offer to teach at the academy of {study_city}, preferring to work alone.",
        "In old age {he} grew deaf, but {he} continued to work almost every day.",
        "{He} was a keen gardener and grew rare {flowers} behind {his} house.",
    ],
    "animal": [
        "In {region} it shares its habitat with the {other_mod} {head} but seldom competes "
        "with it.",
        "Young {animals} are {young_colour} and take on the adult colours only in their "
        "second year.",
        "Numbers of {animals} rise and fall from year to year with the supply of {food}.",
        "An old belief in {region} says that seeing a {common} brings {belief}.",
        "The artist {painter} painted the {common} for a famous book of plates published in "
        "{plate_year}.",
        "The {common} was chosen as the emblem of {region} in {symbol_year}.",
        "Studies at the university of {study_city} showed that it can find its way home over "
        "{home_km} kilometres.",
        "A separate population of {animals} was discovered on an island in {island_year}, "
        "far from the main range.",
        "Its closest relative is the {relative}, which lives in the {relative_habitat} of "
        "{relative_region}.",
        "Scientists have fitted small tags to {animals} to follow their movements through "
        "the year.",
        "Unlike most other {heads}, the {common} stays active even in cold weather.",
        "Its eyes are large and dark, which helps it to see in poor light.",
        "The {common} is sensitive to pollution, so its presence shows that the water and "
        "soil are clean.",
        "Fossils of a close ancestor of the {common} have been found in the clay pits near "
        "{fossil_place}.",
    ],
    "ship": [
        "Her figurehead showed {figure}, carved by a craftsman from {carver_town}.",
        "In {charter_year} she was chartered by the navy to carry {navy_cargo} to {navy_dest}.",
        "Her logbooks record {gales} serious gales in her first ten years at sea.",
        "A young apprentice named {apprentice}, later a famous captain, made his first voyage "
        "aboard her.",
        "She ran aground near {aground_place} in {aground_year} and was refloated after "
        "{aground_days} days.",
        "Her cabins were panelled in {wood}, and the captain's saloon had a small library.",
        "The ship's cook, {cook}, kept a diary of life on board that was printed in {diary_year}.",
        "Her sails were made in {sail_town} from heavy canvas woven of {fibre}.",
        "Insurance records show that she was valued at {value} crowns in {value_year}.",
        "She carried {guns} small guns to defend herself against pirates on {sea}.",
        "Her crew once refused to sail from {strike_port} until their pay was raised.",
        "Sailors said she was a dry ship that handled well in heavy seas.",
        "On one voyage she was trapped in ice for {ice_weeks} weeks off the coast of {ice_coast}.",
        "Her mainmast, made from a single {wood} trunk, was {mast_height} metres tall.",
    ],
    "invention": [
        "Newspapers in {news_city} called the {device} {press_name}.",
        "Several rivals copied the design, and {Inventor_surname} spent years in court "
        "defending the patent.",
        "The {device} was shown at the great exhibition in {expo_city} in {expo_year}, where "
        "it won a medal.",
        "A smaller version of the {device} was made for {small_use}.",
        "{Inventor_surname} sold the rights to the {maker} for {rights_price} crowns.",
        "Workers at first distrusted the {device}, fearing that it would take away their jobs.",
        "The factory that built the {device} employed {workers} people at its peak.",
        "A drawing of the {device} appears in the great encyclopedia of {enc_year}.",
        "The {part} wore out quickly in early models, until a harder {material2} was used.",
        "Children's books of the time often showed the {device} as a symbol of progress.",
        "Instructions for the {device} were printed in {languages} languages so that it "
        "could be sold abroad.",
        "In {accident_year} a faulty {device} caused an accident at {accident_place}, and "
        "the design was changed.",
        "Repair shops for the {device} opened in most large towns of {adopt_region}.",
        "Collectors today pay high prices for early models in good working order.",
    ],
}
CRITICISMS = phrases(
    '"dull and old-fashioned"|"too clever by half"|"a waste of paper"|'
    '"the work of an amateur"|"strange and cold"'
)
POSSESSIONS = phrases("violin|microscope|books|watch|telescope|grandfather's clock|winter coat")
FLOWERS = phrases("tulips|lilies|roses|irises|orchids|peonies|mountain gentians")
SPICES = phrases("aniseed|cinnamon|caraway|cardamom|honey and fennel|saffron")
PRODUCE = phrases(
    "cheese and eggs|vegetables and honey|apples and plums|live geese|"
    "firewood|smoked fish|wool and yarn"
)
OLD_USES = phrases("barracks|warehouse|convent|brewery|school|coaching inn")
BELIEFS = phrases(
    "rain within three days|a good harvest|news of a wedding|bad luck to "
    "sailors|a hard winter|money"
)
FIGURES = phrases(
    "a woman holding a lantern|a white swan|a lion with a crown|a sailor "
    "with a telescope|a mermaid|an eagle with spread wings"
)
WOODS = phrases("oak|teak|pine|mahogany|larch|elm")
PRESS_NAMES = phrases(
    '"a marvel of the age"|"a toy for the rich"|"the end of hard labour"|'
    '"a clever trick"|"the wonder of the year"'
)
SMALL_USES = phrases(
    "use on farms|use at sea|schools|small workshops|private houses|travelling salesmen"
)


def extra_values(kind, rng, names, values, ctx, pick_place):
    base = values["base_year"]
    if kind == "town":
        return {
            "street": rng.choice(
                [
                    "Mill",
                    "Bridge",
                    "Church",
                    "Market",
                    "Castle",
                    "Salt",
                    "Rope",
                    "Tanners",
                    "Wool",
                    "Baker",
                ]
            ),
            "gates": rng.choice(["two", "three", "four", "five"]),
            "family": names.surname(),
            "inn_year": rng.randint(base + 10, 1800),
            "produce": rng.choice(PRODUCE),
            "school_year": rng.randint(1650, 1890),
            "dialect_topic": values["industry"],
            "hospital_year": rng.randint(1850, 1950),
            "old_use": rng.choice(OLD_USES),
            "streets": rng.choice(["three", "four", "six", "eight", "eleven"]),
            "war_year": rng.randint(base + 50, 1870),
            "spice": rng.choice(SPICES),
            "band_year": rng.randint(1820, 1930),
            "flood_year": rng.randint(1600, 1960),
        }
    if kind == "person":
        born, died = values["born_year"], values["died_year"]
        return {
            "travel_year": rng.randint(born + 18, died - 1),
            "travel_place": pick_place(),
            "travel_weeks": rng.randint(2, 20),
            "colleague": names.person(),
            "letters": rng.choice([40, 100, 200, 350, 600]),
            "criticism": rng.choice(CRITICISMS),
            "possession": rng.choice(POSSESSIONS),
            "ill_year": rng.randint(born + 20, died - 1),
            "languages": rng.choice(["three", "four", "five", "six"]),
            "work_title2": "The " + rng.choice(TITLE_ADJ) + " " + rng.choice(TITLE_NOUN),
            "summer_year": rng.randint(born + 15, died - 1),
            "summer_place": pick_place(),
            "sibling": names.given(rng.random() < 0.5),
            "sibling_job": rng.choice(PARENT_JOBS),
            "rival": names.person(),
            "quarrel_years": rng.randint(2, 20),
            "flowers": rng.choice(FLOWERS),
        }
    if kind == "animal":
        cls = ctx["class"]
        info = ANIMAL_CLASSES[cls]
        relative_head = rng.choice(info["heads"])
        return {
            "young_colour": rng.choice(["grey", "spotted", "pale", "dark", "striped"]),
            "belief": rng.choice(BELIEFS),
            "painter": names.person(),
            "plate_year": rng.randint(base, 1950),
            "symbol_year": rng.randint(1900, 2010),
            "study_city": pick_place(),
            "home_km": rng.randint(2, 300),
            "island_year": rng.randint(base + 5, 2010),
            "relative": rng.choice(ANIMAL_MODIFIERS) + " " + relative_head,
            "relative_habitat": rng.choice(info["habitats"]),
            "relative_region": ctx["relative_region"],
            "heads": plural(ctx["head"]),
            "fossil_place": pick_place(),
        }
    if kind == "ship":
        built, service = values["built_year"], values["service"]
        return {
            "figure": rng.choice(FIGURES),
            "carver_town": pick_place(),
            "charter_year": built + rng.randint(1, service),
            "navy_cargo": rng.choice(["soldiers", "horses", "gunpowder", "stores", "wounded men"]),
            "navy_dest": pick_place(),
            "gales": rng.randint(3, 30),
            "apprentice": names.person(False),
            "aground_place": pick_place(),
            "aground_year": built + rng.randint(1, service),
            "aground_days": rng.randint(2, 40),
            "wood": rng.choice(WOODS),
            "cook": names.person(),
            "diary_year": built + service + rng.randint(5, 60),
            "sail_town": pick_place(),
            "fibre": rng.choice(["flax", "hemp", "cotton"]),
            "value": thousands(rng.randint(20, 400) * 100),
            "value_year": built + rng.randint(0, service),
            "guns": rng.choice(["two", "four", "six", "eight"]),
            "sea": rng.choice(LISTS["sea"]),
            "strike_port": pick_place(),
            "ice_weeks": rng.randint(2, 12),
            "ice_coast": pick_place(),
            "mast_height": rng.randint(18, 50),
        }
    inv_year = values["inv_year"]
    return {
        "news_city": pick_place(),
        "press_name": rng.choice(PRESS_NAMES),
        "expo_city": pick_place(),
        "expo_year": inv_year + rng.randint(3, 30),
        "small_use": rng.choice(SMALL_USES),
        "maker": names.word() + " " + rng.choice(["Works", "Foundry", "Company", "Brothers"]),
        "rights_price": thousands(rng.randint(5, 300) * 100),
        "workers": rng.choice([40, 120, 300, 800, 1500]),
        "enc_year": inv_year + rng.randint(5, 60),
        "languages": rng.choice(["three", "four", "five", "six"]),
        "accident_year": inv_year + rng.randint(3, 40),
        "accident_place": pick_place(),
    }


# Questions on each fact (a template field): a list, or (regex, list) where
# the regex must match the sentence template for the fact to be asked there.
QUESTIONS = {
    "town": TOWN_QUESTIONS,
    "person": PERSON_QUESTIONS,
    "animal": ANIMAL_QUESTIONS,
    "ship": SHIP_QUESTIONS,
    "invention": INVENTION_QUESTIONS,
}


# ---------------------------------------------------------------------------
# The world: subjects with names and cross references.


class Document:
    def __init__(self, kind, title, values, sections):
        self.kind = kind
        self.title = title
        self.values = values
        self.sections = sections  # lists of Sentence

    @property
    def sentences(self):
        return [s for section in self.sections for s in section]


def make_world(rng):
    names = Names(rng)
    landforms = ["Valley", "Hills", "Lowlands", "Downs", "Uplands", "Plain"]
    regions = [f"the {names.word()} {rng.choice(landforms)}" for _ in range(24)] + [
        f"the province of {names.word(3)}" for _ in range(12)
    ]
    rivers = [names.word() for _ in range(60)]
    cities = [names.town() for _ in range(30)]
    towns = [names.town() for _ in range(DOCS_PER_KIND)]
    places = [names.town() for _ in range(260)]
    return names, regions, rivers, cities, towns, places


def make_documents(rng):
    names, regions, rivers, cities, towns, places = make_world(rng)
    all_places = towns + places

    def place():
        return rng.choice(all_places)

    docs = []
    plan_kinds = [k for k in KINDS for _ in range(DOCS_PER_KIND)]
    counters = {k: 0 for k in KINDS}
    for kind in plan_kinds:
        i = counters[kind]
        counters[kind] += 1
        if kind == "town":
            name = towns[i]
            ctx = {
                "name": name,
                "region": rng.choice(regions),
                "river": rng.choice(rivers),
                "city": rng.choice(cities),
                "far_city": rng.choice(cities),
                "town_short": name.split()[-1]
                if name.split()[0] in TOWN_PREFIXES
                else name.split()[0],
            }
            values = town_values(rng, names, ctx)
            plan, title = TOWN_PLAN, name
        elif kind == "person":
            female = rng.random() < 0.45
            name = names.person(female)
            ctx = {
                "name": name,
                "female": female,
                "region": rng.choice(regions),
                "moved_to": place(),
                "born_place": place(),
                "city": rng.choice(cities),
                "far_city": place(),
                "died_place": place(),
            }
            values = person_values(rng, names, ctx)
            plan, title = PERSON_PLAN, name
        elif kind == "animal":
            cls = list(ANIMAL_CLASSES)[i % len(ANIMAL_CLASSES)]
            info = ANIMAL_CLASSES[cls]
            head = rng.choice(info["heads"])
            while True:
                if rng.random() < 0.5:
                    name = rng.choice(ANIMAL_MODIFIERS) + " " + names.word().lower()
                else:
                    name = rng.choice(ANIMAL_MODIFIERS) + " " + head
                if name not in names.used:
                    names.used.add(name)
                    break
            sci = names.genus() + " " + rng.choice(EPITHETS)
            ctx = {
                "name": name,
                "class": cls,
                "head": head,
                "sci": sci,
                "region": rng.choice(regions),
                "local_name": names.word().lower(),
                "disc_place": place(),
                "relative_region": rng.choice(regions),
            }
            values = animal_values(rng, names, ctx)
            values["litter"] = rng.choice(["two", "three", "four", "five"])
            plan, title = animal_plan(info), name
        elif kind == "ship":
            roll = rng.random()
            while True:
                if roll < 0.35:
                    ship = rng.choice(SHIP_ADJS) + " " + rng.choice(SHIP_NOUNS)
                elif roll < 0.7:
                    ship = names.word() + " " + rng.choice(SHIP_NOUNS)
                else:
                    ship = names.given(True) + " " + names.surname()
                if ship not in names.used:
                    names.used.add(ship)
                    break
                roll = rng.random()
            ctx = {
                "ship": ship,
                "yard_town": place(),
                "home_port": place(),
                "destination": place(),
                "fate_place": place(),
                "museum_town": place(),
                "company": names.word() + " " + rng.choice(COMPANY_WORDS),
                "fleet_ord": rng.choice(["first", "second", "third", "fifth", "largest", "last"]),
            }
            values = ship_values(rng, names, ctx)
            plan, title = SHIP_PLAN, "the " + ship
        else:
            device = DEVICES[i % len(DEVICES)]
            inventor = names.person()
            while True:
                if rng.random() < 0.6:
                    name = inventor.split()[-1] + " " + device[0]
                else:
                    name = (
                        rng.choice(
                            [
                                "improved",
                                "folding",
                                "double",
                                "compact",
                                "patent",
                                "twin",
                                "portable",
                                "silent",
                            ]
                        )
                        + " "
                        + device[0]
                        + " of "
                        + place()
                    )
                if name not in names.used:
                    names.used.add(name)
                    break
            ctx = {
                "name": name,
                "device": device,
                "inventor": inventor,
                "inv_town": place(),
                "test_place": place(),
                "museum_town": place(),
                "adopt_region": rng.choice(regions),
            }
            values = invention_values(rng, names, ctx)
            plan, title = INVENTION_PLAN, "the " + name
        values["gen_year"] = min(1990, values["base_year"] + rng.randint(10, 80))
        values["gen_town"] = place()
        values.update(extra_values(kind, rng, names, values, ctx, place))
        values.update(subject_values(kind, values))
        length = rng.choices(["short", "normal", "long"], [0.2, 0.6, 0.2])[0]
        sections = []
        for section in plan:
            section = [
                (slot[0], slot[1], slot[2], [expand_nested(t, values) for t in slot[3]])
                if slot[0] == "pool"
                else (slot[0], [expand_nested(t, values) for t in slot[1]])
                for slot in section
            ]
            sections.append(pick_section(rng, section, values, short=length == "short"))
        if length == "long":
            total = sum(len(section) for section in sections)
            count = min(rng.randint(5, 14), MAX_SENTENCES - total)
            chosen = rng.sample(EXTRAS[kind], count)
            chosen.sort(key=EXTRAS[kind].index)
            extra = [render_checked(rng, expand_nested(t, values), values, False) for t in chosen]
            target = sections[EXTRA_SECTION[kind]]
            at = len(target) - 1 if kind == "ship" else len(target)
            target[at:at] = extra
        sections = [section for section in sections if section]
        docs.append(Document(kind, title, values, sections))
    rng.shuffle(docs)
    return docs


# ---------------------------------------------------------------------------
# Outputs.


def corpus_text(docs):
    return "\n\n".join("\n".join(s.text for s in doc.sentences) for doc in docs) + "\n"


def split_documents(rng, docs):
    """{split name: [doc]} per SPLIT_DOCS, drawn per kind from a shuffled order."""
    splits = {name: [] for name in SPLIT_DOCS}
    for kind in KINDS:
        of_kind = [d for d in docs if d.kind == kind]
        rng.shuffle(of_kind)
        start = 0
        for name, n in SPLIT_DOCS.items():
            splits[name].extend(of_kind[start : start + n])
            start += n
    return splits


def classify_rows(rng, splits, docs):
    """Rows (sentence, label) of each split: kind-specific sentences that occur
    once in the corpus (so each belongs to one document of one split)."""
    uses = {}
    for doc in docs:
        for s in doc.sentences:
            uses[s.text] = uses.get(s.text, 0) + 1
    seen = set()
    out = {}
    for split in ("train", "dev", "test"):
        rows = []
        for kind in KINDS:
            pool = []
            for doc in splits["cls_" + split]:
                if doc.kind != kind:
                    continue
                candidates = [
                    s
                    for s in doc.sentences
                    if not s.generic and uses[s.text] == 1 and s.text not in seen
                ]
                rng.shuffle(candidates)
                pool.append(candidates)
            picked = []
            while len(picked) < CLS_SIZES[split] and any(pool):
                for candidates in pool:
                    if candidates and len(picked) < CLS_SIZES[split]:
                        s = candidates.pop()
                        if s.text not in seen:
                            seen.add(s.text)
                            picked.append((s.text, kind))
            if len(picked) < CLS_SIZES[split]:
                raise RuntimeError(f"not enough {kind} sentences for {split}")
            rows.extend(picked)
        rng.shuffle(rows)
        out[split] = rows
    return out


def tsv_text(rows):
    lines = ["sentence\tlabel"] + [f"{text}\t{label}" for text, label in rows]
    for line in lines:
        assert line.count("\t") == 1, line
    return "\n".join(lines) + "\n"


def answer_ok(text, start, end):
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    return before in ' "' and after in ' .,;:"'


def paragraphs_of(doc):
    """Sections as paragraphs; long sections cut into runs of at most 5 sentences."""
    out = []
    for section in doc.sections:
        n = len(section)
        parts = max(1, -(-n // 5))
        size = -(-n // parts)
        for i in range(0, n, size):
            out.append(section[i : i + size])
    return out


def squad_questions(rng, doc):
    """Candidate (paragraph index, field, question, answer text, answer_start) of a doc."""
    values = dict(doc.values)
    questions = QUESTIONS[doc.kind]
    candidates, asked = [], set()
    for p, paragraph in enumerate(paragraphs_of(doc)):
        offset = 0
        for sentence in paragraph:
            for field, (start, end) in sentence.spans.items():
                if field in asked or field not in questions:
                    continue
                if not answer_ok(sentence.text, start, end):
                    continue
                templates = questions[field]
                if isinstance(templates, tuple):  # (where the fact may be asked, questions)
                    pattern, templates = templates
                    if not re.search(pattern, sentence.template):
                        continue
                template = rng.choice(templates)
                missing = [n for n in FIELD.findall(template) if n not in values]
                if missing:
                    raise KeyError(f"question {template!r} needs {missing}")
                question, _ = render(template, values, rng)
                answer = sentence.text[start:end]
                asked.add(field)
                candidates.append((p, field, question, answer, offset + start))
            offset += len(sentence.text) + 1
    return candidates


def squad_data(rng, docs, split, prefix):
    data = []
    per_kind = SQUAD_SIZES[split]
    chosen = {}
    for kind in KINDS:
        cands = []
        for doc in docs:
            if doc.kind == kind:
                cands.extend((doc, c) for c in squad_questions(rng, doc))
        rng.shuffle(cands)
        if len(cands) < per_kind:
            raise RuntimeError(f"not enough {kind} questions for {split}: {len(cands)}")
        for doc, c in cands[:per_kind]:
            chosen.setdefault(id(doc), []).append(c)
    n = 0
    for doc in docs:
        if id(doc) not in chosen:
            continue
        paragraphs = paragraphs_of(doc)
        entry = {"title": doc.title, "paragraphs": []}
        by_paragraph = {}
        for c in sorted(chosen[id(doc)], key=lambda c: (c[0], c[4])):
            by_paragraph.setdefault(c[0], []).append(c)
        for p, qs in sorted(by_paragraph.items()):
            context = " ".join(s.text for s in paragraphs[p])
            qas = []
            for _, _, question, answer, start in qs:
                n += 1
                assert context[start : start + len(answer)] == answer
                qas.append(
                    {
                        "id": f"{prefix}{n:04d}",
                        "question": question,
                        "answers": [{"text": answer, "answer_start": start}],
                    }
                )
            entry["paragraphs"].append({"context": context, "qas": qas})
        data.append(entry)
    return {"version": "1.1", "data": data}


def build():
    """{relative path: bytes} of every file this script writes."""
    rng = random.Random(SEED)
    docs = make_documents(rng)
    split_rng = random.Random(SEED + 1)
    splits = split_documents(split_rng, docs)
    files = {"corpus.txt": corpus_text(docs)}
    rows = classify_rows(random.Random(SEED + 2), splits, docs)
    for split, split_rows in rows.items():
        files[f"classify/{split}.tsv"] = tsv_text(split_rows)
    qa_rng = random.Random(SEED + 3)
    for split in ("train", "dev"):
        order = [d for d in docs if d in splits["squad_" + split]]
        squad = squad_data(qa_rng, order, split, f"{split}-")
        files[f"squad/{split}.json"] = json.dumps(squad, indent=1, ensure_ascii=True) + "\n"
    return {path: text.encode("utf-8") for path, text in files.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--output_dir",
        default=DEFAULT_OUTPUT,
        help="folder to write (default: demo/data next to this script)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if the files in --output_dir differ",
    )
    args = parser.parse_args(argv)
    files = build()
    if args.check:
        stale = []
        for path, data in sorted(files.items()):
            full = os.path.join(args.output_dir, path)
            try:
                with open(full, "rb") as f:
                    same = f.read() == data
            except OSError:
                same = False
            if not same:
                stale.append(path)
        if stale:
            print(
                "out of date: " + ", ".join(stale) + "; run python demo/make_data.py",
                file=sys.stderr,
            )
            return 1
        print(f"{len(files)} files up to date in {args.output_dir}")
        return 0
    for path, data in sorted(files.items()):
        full = os.path.join(args.output_dir, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)
    print(f"wrote {len(files)} files to {args.output_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
