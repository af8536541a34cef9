"""Everyday requests of kinds a personal assistant is often asked, as a class of their own.

The semantic matcher compares a message with these as well as with the installed
functions: a message much closer to one of these than to any function is not a
request for the installed agents, and makes no call. They name domains, not
sentences to catch: smart home, weather, travel, timers and alarms, music and
media, phone calls and messages, trivia, maths, shopping online, rides, news,
sports, jokes, the time. An installed agent for any of these has its own
examples, which are closer still.
"""

from __future__ import annotations

OUTSIDE: tuple[str, ...] = (
    # smart home
    "turn on the lights", "switch off the lamp in the bedroom", "dim the lights", "set the thermostat to 21 degrees",
    "lock the front door", "turn up the heating", "open the garage door", "start the vacuum cleaner",
    # weather
    "what's the weather tomorrow", "will it rain today", "how cold is it outside", "weather forecast for the weekend",
    "is it going to snow", "temperature in london",
    # travel
    "book me a flight to paris", "find a hotel in rome", "book a train ticket to berlin", "rent a car",
    "how long is the drive to the airport", "navigate to the nearest gas station", "directions to work",
    "call me an uber", "order a taxi",
    # timers and alarms
    "set a timer for ten minutes", "wake me up at 7", "set an alarm for 6am", "start a countdown",
    "stop the timer", "snooze",
    # music and media
    "play some music", "play jazz on spotify", "skip this song", "turn the volume up", "pause the podcast",
    "play the next episode", "put on a movie",
    # calls and messages
    "call mom", "phone the office", "send a text to alex", "text my wife that I'm running late",
    "read my new emails", "send an email to my boss",
    # trivia, maths, language
    "how tall is the eiffel tower", "who won the world cup", "what is the capital of australia",
    "what's 15 percent of 80", "convert 10 miles to kilometers", "translate good morning into spanish",
    "define serendipity", "how far away is the moon",
    # news, sports, money
    "what's the news today", "latest headlines", "what's the score of the game", "how are my stocks doing",
    "bitcoin price", "exchange rate euro to dollar",
    # online shopping, orders, deliveries
    "order a pizza", "track my package", "where is my amazon delivery", "order new headphones online",
    # chit-chat
    "tell me a joke", "sing me a song", "what time is it", "what day is it today", "flip a coin", "roll a dice",
    "how old are you", "who made you",
)
