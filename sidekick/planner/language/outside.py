"""What people often ask a personal assistant for that no starter agent does, as domain descriptions.

The semantic matcher compares a message, and the words of a request that a generic
template did not account for ("book {title}": "a hotel in Rome"), with these as well as
with the installed functions. A request much closer to one of these domains than to the
function its words fit is not for the installed agents, and makes no call.

Each domain is described the way a function's description reads: short phrases naming
what it covers, in general words. They are not requests to catch: no phrase here is a
sentence anyone tests with. An installed agent that serves one of these domains (a
weather agent) has its own description and examples, which are closer still, so the
domains here never hide a real function.
"""

from __future__ import annotations

from dataclasses import dataclass

@dataclass(frozen=True)
class Domain:
    describe: tuple[str, ...]  # what it covers, in general words (compared by meaning)
    # Nouns that by themselves say the request is of this domain ("flight", "taxi"): a word of a
    # request that is one of these, and no word of any installed function, points outside.
    names: tuple[str, ...] = ()
    # Its things are goods a shop sells (bulbs, appliances): on a list of things to get they are
    # what they seem, so they say nothing against a list of things.
    goods: bool = False
    # Whether one needs its things is asked of another domain ("do I need an umbrella": the forecast's),
    # so asked so they are no goods to put on a list.
    asked_of_another: bool = False


DOMAINS: dict[str, Domain] = {
    "smart home": Domain(
        ("smart home devices", "lights and lamps", "heating, thermostat and air conditioning",
         "doors, locks, blinds, curtains and the garage", "switching household appliances on and off"),
        ("thermostat", "heating", "aircon", "light", "lights", "lamp", "door", "lock", "blinds", "curtains", "vacuum",
         "hoover", "fan", "socket", "plug", "sprinkler", "doorbell"), goods=True,
    ),
    "weather": Domain(("the weather forecast", "rain, snow, sunshine, wind, storms and temperature outside"),
                      ("weather", "forecast")),
    # What one takes against the weather: a question about needing it is the forecast's ("do I need a
    # brolly today"), but on a list of things to get it is a thing to buy ("buy sunscreen").
    "weather gear": Domain(("umbrellas, raincoats and sunglasses for the weather",),
                           ("umbrella", "brolly", "raincoat", "sunscreen", "suncream", "sunnies", "toque", "jacket", "coat"),
                           goods=True, asked_of_another=True),
    "travel": Domain(
        ("travel bookings", "flights, airlines, airports and plane seats", "hotels, hostels and places to stay",
         "trains, buses, ferries and car hire", "renting a car", "trips, holidays and vacations abroad",
         "directions, distances, routes, maps and traffic"),
        ("flight", "airline", "airport", "plane", "hotel", "hostel", "motel", "ferry", "cruise", "traffic", "rental"),
    ),
    "rides": Domain(("taxis, ubers and ride hailing", "a ride or a lift to somewhere"), ("taxi", "ride", "uber", "lyft", "cab", "ola", "rapido", "bolt", "didi", "gojek", "careem")),
    "tickets and reservations": Domain(
        ("tickets for concerts, gigs, shows, theatre, cinema and sports matches", "booking a table at a restaurant"),
        ("ticket", "concert", "gig", "cinema", "theatre", "movie", "film", "restaurant", "reservation"),
    ),
    "timers and alarms": Domain(("timers, stopwatches and countdowns", "alarm clocks, alarms and wake-up calls"),
                                ("timer", "alarm", "stopwatch", "countdown", "wake")),
    "music and media": Domain(
        ("music, songs, tracks, albums, bands, artists and playlists", "radio stations, podcasts and audiobooks",
         "television, films, movies, series and videos", "playback, pausing and the volume"),
        ("music", "song", "album", "playlist", "podcast", "radio", "track", "tune", "afrobeats", "amapiano", "reggaeton", "audiobook", "volume", "telly", "tv",
         "television", "netflix", "spotify"),
    ),
    "books": Domain(("books, novels, authors and reading recommendations",), ("novel", "author", "paperback", "ebook")),
    "calls and messages": Domain(("phone calls to people", "text messages, emails and chat apps",
                                  "texting or messaging someone"),
                                 ("email", "sms", "message", "whatsapp", "text", "texting", "voicemail", "dm")),
    "knowledge": Domain(
        ("general knowledge and trivia", "facts about famous people, countries, cities, history and science",
         "the meaning, spelling and translation of words", "how many people live in a country or a city",
         "the tallest mountains, longest rivers, oceans, planets and continents",
         "tips and advice on the best way to store or look after things"),
        ("trivia", "population", "country", "mountain", "river", "ocean", "planet", "continent", "capital", "live",
         "inhabitant"),
    ),
    "maths": Domain(("arithmetic, sums and percentages", "converting units and measurements"),
                    ("ounce", "pound", "gram", "kilogram", "teaspoon", "tablespoon", "inch", "metre", "yard")),
    "news and money": Domain(
        ("news headlines", "sports scores, results, leagues and tournaments",
         "stock prices, exchange rates, bitcoin and cryptocurrency", "prices of things and how much they cost"),
        ("headline", "score", "league", "tournament", "championship", "champion", "medal", "olympics", "stock", "bitcoin",
         "crypto", "sensex", "nasdaq", "ftse", "nikkei", "dow", "forex", "share price", "asx", "nyse", "tsx", "nifty"),
    ),
    "banking": Domain(("bank accounts, balances and savings", "paying bills, transferring and sending money",
                        "credit cards, loans, mortgages and payments"),
                       ("bank", "balance", "savings", "transfer", "quid", "bucks", "paypal", "venmo", "zelle", "loan",
                        "mortgage", "overdraft", "iban")),
    "health": Domain(("sleep, steps, workouts, exercise and heart rate", "calories and nutrition facts"),
                     ("sleep", "calorie", "workout")),
    "orders and deliveries": Domain(("ordering things online", "parcels, packages and deliveries",
                                     "takeaway food delivery"), ("parcel", "package", "delivery", "takeaway", "delivered", "deliver",
                                                               "courier", "deliveroo", "ubereats", "doordash",
                                                               "grubhub", "swiggy", "zomato")),
    # A question of a measure (lexicon: "how long" is one word) asks for a fact no starter function gives;
    # an agent whose examples ask it ("how long until my next meeting") speaks it, and it then names nothing here.
    "dates": Domain(("the time and today's date", "how long until a holiday or a date"),
                    ("how long", "how often", "how far", "how old")),
    # Writing software: the coder agent is no starter, so a request to build or debug code is for none of them.
    "coding": Domain(("writing code, programs and scripts, building apps", "debugging errors and bugs in code",
                      "programming languages and frameworks"),
                     ("app", "code", "bug", "debug", "programming", "python", "javascript", "typescript", "react",
                      "compiler", "syntax")),
    "chit-chat": Domain(("jokes, riddles, games and small talk", "the assistant itself"), ("joke", "riddle", "dice")),
}

OUTSIDE: tuple[str, ...] = tuple(phrase for domain in DOMAINS.values() for phrase in domain.describe)
# Which phrases of OUTSIDE describe goods (Domain.goods), in OUTSIDE's order.
GOODS: tuple[bool, ...] = tuple(domain.goods for domain in DOMAINS.values() for _ in domain.describe)


def domain_names(goods: bool = True) -> frozenset[str]:
    """The nouns that name these domains (Domain.names), singular and plural; without goods', on request."""
    names = {n for domain in DOMAINS.values() if goods or not domain.goods for n in domain.names}
    return frozenset(names | {n + "s" for n in names})


def asked_of_another() -> frozenset[str]:
    """The nouns whose need is asked of another domain (Domain.asked_of_another), singular and plural."""
    names = {n for domain in DOMAINS.values() if domain.asked_of_another for n in domain.names}
    return frozenset(names | {n + "s" for n in names})
