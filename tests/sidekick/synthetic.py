"""About fifty more tools, of the kinds people install next to the starter agents.

Used to check that the planner stays fast with many tools, and to see how well
the starter agents' requests are still routed when other functions compete for
the same words (a to-do list next to the grocery list, reminders next to notes).
"""

from __future__ import annotations

from typing import Any

from dreamer.sidekick.planner import Tool

_STR: dict[str, Any] = {"type": "string"}
_INT: dict[str, Any] = {"type": "integer"}
_NUM: dict[str, Any] = {"type": "number"}
_DAY: dict[str, Any] = {"type": "string", "default": "today"}


def _opt(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}], "default": None}


def _enum(*values: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


# agent, function, description, {param: (schema, required)}, examples, confirm
_SPECS: list[tuple[str, str, str, dict[str, tuple[dict[str, Any], bool]], list[str], bool]] = [
    ("weather", "forecast", "The weather forecast for a city and day.",
     {"city": (_opt(_STR), False), "day": (_DAY, False)},
     ["what's the weather [like] {day}", "weather in {city}", "will it rain {day}", "forecast for {city} {day}",
      "do I need an umbrella {day}"], False),
    ("music", "play", "Play a song, an artist or a playlist.", {"query": (_STR, True)},
     ["play {query}", "put on {query}", "I want to hear {query}", "play some {query}"], False),
    ("music", "pause", "Pause the music.", {}, ["pause [the] music", "stop the music", "pause"], False),
    ("music", "skip", "Skip to the next song.", {}, ["skip [this] song", "next song", "skip"], False),
    ("music", "volume", "Set the volume from 0 to 100.", {"level": (_INT, True)},
     ["set [the] volume to {level}", "volume {level}", "turn it (up|down) to {level}"], False),
    ("timer", "start", "Start a countdown timer.", {"minutes": (_INT, True), "label": (_opt(_STR), False)},
     ["set a timer for {minutes} minutes", "timer {minutes} minutes", "{minutes} minute timer",
      "start a {minutes} minute timer for {label}"], False),
    ("timer", "cancel", "Cancel the running timer.", {}, ["cancel the timer", "stop the timer"], False),
    ("alarm", "set", "Set an alarm.", {"at": (_STR, True)},
     ["set an alarm for {at}", "wake me up at {at}", "alarm {at}"], False),
    ("alarm", "list_alarms", "Show the alarms that are set.", {}, ["show my alarms", "what alarms do I have"], False),
    ("lights", "turn_on", "Turn on the lights in a room.", {"room": (_opt(_STR), False)},
     ["turn on the lights [in the {room}]", "lights on [in the {room}]", "switch on the {room} lights"], False),
    ("lights", "turn_off", "Turn off the lights in a room.", {"room": (_opt(_STR), False)},
     ["turn off the lights [in the {room}]", "lights off [in the {room}]", "switch off the {room} lights"], False),
    ("lights", "dim", "Dim the lights to a percentage.", {"level": (_INT, True), "room": (_opt(_STR), False)},
     ["dim the lights to {level} percent", "set the {room} lights to {level}"], False),
    ("thermostat", "set_temperature", "Set the heating to a temperature in degrees.",
     {"degrees": (_NUM, True)},
     ["set the (heating|thermostat|temperature) to {degrees} [degrees]", "make it {degrees} degrees"], False),
    ("email", "send", "Send an email.",
     {"to": (_STR, True), "subject": (_opt(_STR), False), "body": (_opt(_STR), False)},
     ["send an email to {to}", "email {to} about {subject}", "write an email to {to} saying {body}"], True),
    ("email", "inbox", "Show the newest emails.", {"limit": ({"type": "integer", "default": 10}, False)},
     ["check my email", "any new emails", "show my inbox", "read my last {limit} emails"], False),
    ("contacts", "lookup", "Find a contact's phone number and address.", {"name": (_STR, True)},
     ["what's {name}'s number", "find {name} in my contacts", "look up {name}'s address"], False),
    ("phone", "call", "Call a contact.", {"name": (_STR, True)}, ["call {name}", "phone {name}", "ring {name}"], True),
    ("news", "headlines", "Top news headlines, optionally about a topic.", {"topic": (_opt(_STR), False)},
     ["what's in the news", "news about {topic}", "headlines", "latest {topic} news"], False),
    ("translate", "translate", "Translate text into another language.",
     {"text": (_STR, True), "language": (_enum("spanish", "french", "german", "italian", "japanese"), True)},
     ["translate {text} (into|to) {language}", "how do you say {text} in {language}"], False),
    ("calculator", "compute", "Work out an arithmetic expression.", {"expression": (_STR, True)},
     ["what is {expression}", "calculate {expression}", "compute {expression}"], False),
    ("currency", "convert", "Convert an amount between currencies.",
     {"amount": (_NUM, True), "source": (_STR, True), "target": (_STR, True)},
     ["convert {amount} {source} to {target}", "how much is {amount} {source} in {target}"], False),
    ("stocks", "quote", "The latest price of a stock or coin.", {"symbol": (_STR, True)},
     ["how much is {symbol}", "price of {symbol}", "how is {symbol} doing", "stock price of {symbol}"], False),
    ("fitness", "log_workout", "Log a workout.", {"activity": (_STR, True), "minutes": (_opt(_INT), False)},
     ["log a {minutes} minute {activity}", "I went {activity} for {minutes} minutes", "log {activity}"], False),
    ("fitness", "steps", "How many steps were walked on a day.", {"day": (_DAY, False)},
     ["how many steps did I walk {day}", "my steps {day}", "step count"], False),
    ("water", "log_water", "Log glasses of water drunk.", {"glasses": ({"type": "integer", "default": 1}, False)},
     ["I drank {glasses} glasses of water", "log a glass of water", "log {glasses} glasses of water"], False),
    ("expenses", "add_expense", "Record money spent.",
     {"amount": (_NUM, True), "category": (_enum("food", "transport", "rent", "fun", "other"), False),
      "note": (_opt(_STR), False)},
     ["I spent {amount} on {category}", "add an expense of {amount} for {note}", "log {amount} for {category}"], False),
    ("expenses", "summary", "What was spent this month, by category.", {"month": (_opt(_STR), False)},
     ["how much did I spend [this month]", "spending summary for {month}", "show my expenses"], False),
    ("todo", "add_task", "Add a task to the to-do list.", {"task": (_STR, True)},
     ["add {task} to my (todo|to-do) list", "remind me to do {task}", "new task {task}", "I have to {task}"], False),
    ("todo", "complete", "Mark a task as done.", {"task": (_STR, True)},
     ["mark {task} as done", "I finished {task}", "complete the task {task}"], False),
    ("todo", "list_tasks", "Show the open tasks.", {}, ["what's on my (todo|to-do) list", "show my tasks",
                                                         "what do I have to do"], False),
    ("packages", "track", "Where a parcel is.", {"tracking": (_STR, True)},
     ["track my package {tracking}", "where is my parcel {tracking}", "track {tracking}"], False),
    ("flights", "status", "Whether a flight is on time.", {"flight": (_STR, True)},
     ["is flight {flight} on time", "status of flight {flight}", "when does {flight} land"], False),
    ("taxi", "book_ride", "Book a taxi to a destination.", {"destination": (_STR, True), "at": (_opt(_STR), False)},
     ["get me a taxi to {destination}", "book a ride to {destination} [at {at}]", "call a cab to {destination}"], True),
    ("restaurants", "reserve", "Reserve a table at a restaurant.",
     {"restaurant": (_STR, True), "when": (_STR, True), "people": ({"type": "integer", "default": 2}, False)},
     ["book a table at {restaurant} for {people} [people] {when}", "reserve {restaurant} {when}",
      "table for {people} at {restaurant} {when}"], True),
    ("restaurants", "nearby", "Restaurants nearby, optionally of a kind.", {"kind": (_opt(_STR), False)},
     ["find a {kind} restaurant [nearby]", "where can I eat {kind} food", "restaurants near me"], False),
    ("movies", "showtimes", "When a film is showing.",
     {"movie": (_STR, True), "day": (_DAY, False)},
     ["when is {movie} showing {day}", "showtimes for {movie} [{day}]", "movies {day}"], False),
    ("podcasts", "play_podcast", "Play the latest episode of a podcast.", {"show": (_STR, True)},
     ["play the latest {show} episode", "play the podcast {show}", "new episode of {show}"], False),
    ("books", "add_to_reading_list", "Add a book to the reading list.", {"title": (_STR, True)},
     ["add {title} to my reading list", "I want to read {title}", "save the book {title}"], False),
    ("habits", "check_in", "Check in a habit for today.", {"habit": (_STR, True)},
     ["I did my {habit} today", "check in {habit}", "mark {habit} done for today"], False),
    ("journal", "write_entry", "Write a journal entry.", {"entry": (_STR, True)},
     ["dear diary {entry}", "journal entry {entry}", "write in my journal {entry}"], False),
    ("reminders", "remind", "Remind the user of something at a time.", {"text": (_STR, True), "when": (_STR, True)},
     ["remind me to {text} {when}", "remind me {when} to {text}", "set a reminder for {when} to {text}"], False),
    ("maps", "directions", "Directions to a place.", {"destination": (_STR, True)},
     ["how do I get to {destination}", "directions to {destination}", "navigate to {destination}"], False),
    ("maps", "traffic", "The traffic on the way to work.", {}, ["how is the traffic", "traffic to work"], False),
    ("home", "lock", "Lock a door.", {"door": ({"type": "string", "default": "front"}, False)},
     ["lock the {door} door", "lock up"], True),
    ("home", "vacuum", "Start the robot vacuum.", {"room": (_opt(_STR), False)},
     ["start the vacuum", "vacuum the {room}", "clean the floors"], False),
    ("plants", "water_plant", "Record that a plant was watered.", {"plant": (_STR, True)},
     ["I watered the {plant}", "water the {plant}"], False),
    ("bank", "balance", "The balance of the bank accounts.", {},
     ["what's my balance", "how much money do I have"], False),
    ("bank", "transfer", "Send money to someone.", {"amount": (_NUM, True), "to": (_STR, True)},
     ["send {amount} to {to}", "transfer {amount} euros to {to}", "pay {to} {amount}"], True),
    ("dictionary", "define", "The meaning of a word.", {"word": (_STR, True)},
     ["define {word}", "what does {word} mean", "meaning of {word}"], False),
    ("encyclopedia", "lookup", "A short article about a topic.", {"topic": (_STR, True)},
     ["tell me about {topic}", "who is {topic}", "what is a {topic}"], False),
    ("fun", "joke", "Tell a joke.", {}, ["tell me a joke", "make me laugh", "say something funny"], False),
    ("sleep", "report", "How the user slept.", {"day": (_DAY, False)},
     ["how did I sleep [{day}]", "sleep report"], False),
]


def synthetic_tools() -> list[Tool]:
    tools = []
    for agent, function, description, params, examples, confirm in _SPECS:
        schema = {
            "type": "object",
            "properties": {name: spec for name, (spec, _) in params.items()},
            "required": [name for name, (_, required) in params.items() if required],
        }
        tools.append(Tool(agent, function, description, schema, tuple(examples), confirm))
    return tools
