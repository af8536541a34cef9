"""Tidying a free-text or list value a pattern's slot took, before it becomes an argument.

A slot takes a run of words; people wrap what they mean in words that are not it:
politeness ("could you", "for me", "real quick"), how they came to need it ("we've run out
of baking soda", "low on batteries", "I picked up garlic already"), where it comes from
("basil from the store") and where it goes ("piano lesson to my schedule"). None of these
is ever part of a value, in any domain, so they go here, by rule, for every function.

A value that is nothing but such words is left as it was: the user may mean them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from dreamer.sidekick.planner.language.dates import parse_moment, spoken_minutes
from dreamer.sidekick.planner.language.lexicon import FILLERS, PRONOUNS, SYNONYMS
from dreamer.sidekick.planner.language.chunks import (
    names_nothing,
    placed_after,
    reads_as_clause,
    tells,
    things_of,
    without_dangling,
)
from dreamer.sidekick.planner.language.pictures import JOINERS, PICTURES, TICKS
from dreamer.sidekick.planner.language.remarks import judging_words
from dreamer.sidekick.planner.language.slots import QUANTITY, without_quotes

# Politeness and hedges that open a request: never the value.
_POLITE_HEAD = (
    r"(?:please|pls|plz|kindly|just|quickly|real quick|go ahead and|could you|can you|would you|will you"
    r"|i need you to|i want you to|i'd like you to|also"
    # chat-speak openers that say how, never what: "ngl we need hot cheetos", "lowkey out of frozen pizza"
    r"|ngl|tbh|lowkey|highkey|honestly|literally|basically|nvm about|never mind about|forget about"
    # words that join a clause to what came before: "(..., ) so I need earl grey", "but anyway we ran out of salt"
    r"|so|anyway|oh|well|but|and|just in case"
    # interjections and whom it is said to, opening it: "ope, limes too", "y'all add sweet tea"
    r"|ope|oops|whoops|nvm|y'all|yall|fyi|heads up|bro|yo|oi|yeah|yea"
    # whom it is for, left once "jot this down" went: "jot this down for me, Bazza owes me fifty bucks"
    r"|(?:for )?me,"
    # the ask for word, said again before what to watch for: "(monitor ... and) tell me when tickets available [appears]"
    r"|(?:tell|let|notify|alert|ping|inform) (?:me|us)(?: know)? (?:when|if|once|as soon as)"
    r"(?: (?:it|the page|the site|they) (?:says|shows|mentions|lists|reads))?)"
)
# How the user came to need or have the thing: a state, not the thing.
_STATE_HEAD = (
    r"(?:(?:i|we)(?:'ve| have)? (?:run|ran|running) out of|(?:i'm|i am|we're|we are) (?:all |almost |nearly )?out of"
    r"|(?:i'm|i am|we're|we are) (?:totally |completely |pretty much |basically |plumb |clean |fresh |right |all but )out of"
    # none left, as a kitchen or a Scot says it: "we're 86'd on lemons", "there's nae square sausage left",
    # "short on butter"
    r"|(?:(?:i'm|i am|we're|we are) )?(?:86'd|86ed|eighty-sixed)(?: on)?"
    # Nigerian English's wish to buy: "I want to be buying yam"
    r"|(?:i|we) (?:want|need) to be (?:buying|getting)"
    r"|there(?:'s| is| are|s) (?:no|nae|none|not any|hardly any|barely any)(?: more)?"
    r"|(?:(?:i'm|i am|we're|we are) )?(?:a bit |bit |running |getting |quite )?short (?:on|of)"
    # who wants it, said before it, as a household's word or a pronoun: "my kid wants palak paneer", "I want to use
    # up the lentils" (a note keeps "the Hendersons want ...": _ITEM_HEAD takes any name, for a thing only)
    r"|(?:the |my |our )?(?:i|we|kids?|sons?|daughters?|wife|husband|partner|family|mum|mom|dad|boss|baby|toddler"
    r"|girls|boys|children|child|hubby|missus|teenagers?|teens?) (?:want|wants|asked for|asks for|keep asking for"
    r"|keeps asking for)"
    r"|(?:the |my |our )?[\w'-]+ (?:needs|wants|asked|told) me to (?:pick up|get|buy|grab)(?: some| more)?"
    # about to run out, and how low, in a word or two: "we're fixin' to run out of grits", "we're wicked
    # low on creamer", "I'm about to run out of atta"
    r"|(?:i'm|i am|we're|we are|im|were) (?:fixin'|fixing|about|going|gonna|bound)(?: to)? run out of"
    r"|(?:i'm|i am|we're|we are|im) (?:wicked|really|very|super|so|pretty|kinda|kind of|proper|dead|well) (?:low on|short on|out of)"
    # none left, in other Englishes: "we're outta snags", "we've nae Irn-Bru" (Scots), "we're after running out
    # of rashers" (Irish), "we don finish Maggi cubes" (Nigerian Pidgin), "we've run dry on toilet paper"
    r"|(?:i'm|i am|we're|we are|im|were) (?:all |almost |nearly |totally |completely )?outta"
    r"|(?:(?:i|we)(?:'ve| have)? (?:got )?|(?:i've|we've) |there's )nae"
    r"|(?:i'm|i am|we're|we are) after (?:running|run|using) (?:out of|up)"
    r"|(?:i|we) don (?:finish|use up|run out of)"
    r"|(?:looks like |seems like )?(?:i|we)(?:'ve| have)? (?:run|ran|gone) dry (?:on|of)"
    # none in the house, said with "have": "we literally have no Milo", "we nuh have no hard dough bread"
    # (Patois' "nuh" is "don't"), "we're at zero hummus"
    r"|(?:i|we) (?:literally |really |actually |just )?(?:(?:nuh|don't|dont|do not) )?(?:have|got) (?:no|zero|nae)(?: more)?"
    r"|(?:i'm|i am|we're|we are|im) (?:at|down to) (?:zero|none|nothing)(?: on)?"
    # none needed: "we're good on paper towels", "I'm set for rice"
    r"|(?:i'm|i am|we're|we are|im) (?:good|fine|ok|okay|set|sorted|covered|all set|well stocked) (?:on|for)"
    # the copula left out: "we out of hot cheetos", "we low on rice"
    r"|(?:i|we|y'all|yall) (?:all |almost |nearly )?(?:out of|outta|low on)"
    # what it is for, said before who needs it: "for the lunchboxes we need ..."
    r"|for (?:the |my |our )?[\w-]+(?: [\w-]+)?,?(?= (?:we|i) (?:need|want|have|'ve|'re|are))"
    # the same once a pattern took "for the" as its own words: "lunchboxes we need applesauce pouches"
    r"|(?:[\w'-]+ ){1,3}(?:we|i) (?:still )?need(?: to get| to buy)?(?: some| more)?"
    r"|(?:i'm|i am|we're|we are) (?:running |getting |almost |nearly )?low on|(?:running |getting |almost |nearly )?low on"
    # how low, with no one said: "heaps low on Vegemite", "super low on oat milk", "dangerously low on coffee"
    r"|(?:really|very|super|so|pretty|kinda|proper|dead|well|heaps|way|totally|seriously|dangerously|critically|a bit"
    r"|bit|quite|rather|awfully) (?:low on|short on|out of)"
    # none left, in the words of someone writing in a second language: "we not have yoghurt", "is finish the butter"
    r"|(?:i|we) (?:do not|don't|dont|not|no longer) (?:have|got)(?: any| no)?(?: more)?"
    r"|(?:is|are|it's|its) (?:finish|finished|over|empty|gone)"
    r"|(?:i|we) (?:have|'ve got|have got|got) no(?: more)?|(?:i've|ive|we've|weve) no(?: more)?"
    r"|(?:almost |nearly |all )?out of|(?:i|we) (?:have|'ve got|have got|got)(?: some)?"
    # what was noticed, and that none is left: "realised we have no maple syrup [left]"
    r"|(?:(?:i|we) )?(?:just )?(?:realised|realized|noticed|saw|found|seems|turns out)(?: that)?"
    r"|(?:(?:i|we) )?(?:still |already )(?:have|got)|(?:just |already )?got"
    # that it is needed, with or without who needs it: "need hot sauce", "i need buy rice", "we need to get eggs"
    r"|(?:(?:i|we) )?need(?: to)?(?: buy| get| pick up)?(?: some| more)?"
    # what has to be done, said before it: "i gotta pay the council tax", "we have to call the plumber"
    r"|(?:(?:i|we) )?(?:gotta|got to|have to|has to|must)"
    # making sure of it: "make sure free-range eggs is on the list"
    r"|make sure(?: that)?(?: we have| there's| there is)?"
    # the user telling Sidekick what to do with it, in a second language: "please you write onions in the list"
    r"|you (?:write|put|add|note|make)"
    r"|(?:(?:i|we) )?(?:just |already )?(?:picked up|bought|grabbed|purchased)|(?:i|we) (?:just |already )?got"
    r"|that (?:uses|use|has|have|contains|includes|needs)|(?:to )?(?:use|using) up(?: the| my| our| some| all the)?"
    r"|(?:uses|using|containing|including|having)"
    # that a chore is done, said before it: "I finished pay the electricity bill", "done with return the books"
    r"|(?:(?:i|we) (?:have |'ve )?(?:finished|completed|did|done)|(?:i'm|i am|we're|we are) done with|done with)"
    # what a search is about: "my notes re pension"
    r"|re:?|regarding"
    r"|(?:(?:what's|what is|what are|whats) )?(?:any|some|a) (?:good|nice|tasty|great|decent)"
    r"|(?:i|we) (?:feel like|fancy|want|would like|'d like|'d love|would love|love) (?:cooking|making|eating|having|some|a|an)?"
    # hedges and reports around what is needed: "reckon we need ...", "it appears we have exhausted our
    # supply of ...", "we require ..."
    r"|(?:i|we) (?:reckon|think|guess|suppose)(?: that)?|reckon|it (?:appears|seems)(?: that)?"
    r"|(?:(?:i|we)(?: have|'ve)? )?(?:exhausted|used up|finished) (?:our|my|the) (?:supply|stock) of|(?:i|we) require"
    # what kind of entry it is, said before it: "create a reminder to water the plants"
    r"|(?:a |an |the |my )?(?:reminder|task|to-do|todo|entry|item) (?:to|that|about|for)"
    # what introduces its words: "a note saying ...", "an event called ...", "a note that says ..."
    r"|(?:(?:a |an |the |my )?(?:new )?(?:note|memo|event|calendar entry|entry|appointment|task|to-do|todo|reminder"
    r"|item|page|article) )?(?:saying|that says|which says|that reads|called|named|titled)"
    r"|(?:that |which )?(?:says|reads)"
    # the kind alone, then the entry: "complete task call the bank", "an event team offsite" (not "the task is ...")
    r"|(?:(?:a |an |the |my )(?:task|to-do|todo|calendar entry|event)|task|to-do|todo|calendar entry)"
    r"(?= (?!(?:is|was|are|were|has|had|will|planning|planner)\b))"
    # what the user is after, said around it: "I'm looking for a thai recipe"
    r"|(?:i'm|i am|we're|we are) (?:looking|searching) for"
    # what the page should say, told after the page: "watch URL and tell me when it says remote"
    r"|(?:and )?inform (?:me )?(?:when|if|once)"
    r"|(?:and )?(?:tell|let|notify|alert|ping) me (?:know )?(?:when|if|once) (?:it|the page|the site|that page|this page)"
    r" (?:says|mentions|contains|has|shows|lists)"
    # why it is going: "I can't make the dentist, cancel it"
    r"|(?:i|we) (?:can't|cannot|can not|won't|will not|couldn't) (?:make it to|make|go to|attend|do)"
    r"|(?:i'm|i am|we're|we are|im) not (?:going|coming|gonna go|able to make it)(?: to)?"
    # what a search is for, said around it: "search my notes for anything on MOT"
    r"|(?:anything|everything|something|stuff|whatever|notes?) (?:on|about|regarding|to do with|related to|re|mentioning)"
    # that more would help: "we might could use some more sweet tea bags", "I could really use coffee"
    r"|(?:i|we) (?:could|might could|might|could really|can always) use(?: some| a few)?(?: more)?"
    # what the ideas are for, left on the ingredient: "(any ideas) what to do with chicken"
    r"|(?:what )?to (?:do|make|cook) with"
    # that it is no longer needed: "we don't need rocket after all"
    r"|(?:(?:i|we) )?(?:don't|dont|do not|no longer) need(?: any| the)?(?: more)?)"
)
_HEAD = re.compile(rf"^(?:{_POLITE_HEAD}|{_STATE_HEAD}) ", re.IGNORECASE)
_PLACES = r"(?:list|calendar|schedule|agenda|diary|planner|notes|to-do list|todo list|tasks|grocerylist|shoppinglist|todolist)"
# A value that is nothing but where things are kept ("my calendar"): no value at all.
_ONLY_PLACE = re.compile(rf"^(?:the |my |our )?(?:[\w-]+ )?{_PLACES}$", re.IGNORECASE)
# Where it comes from or goes, when, and trailing politeness.
_TAIL = re.compile(
    r" (?:(?:from|at|in) the (?:store|shop|shops|supermarket|market|grocery store|grocer's)"
    r"|on (?:the|my|our) way (?:home|back|in|out|over|there|to (?:the |my )?\w+)(?: (?:from|to) (?:the |my )?\w+)?"
    r"|(?:to|on|onto|in|into|from|off) (?:the |my |our )?(?:[\w-]+ )?"
    rf"{_PLACES}"
    r"|already|now|right now|rn|again|too|as well|then|please|pls|kindly|thanks|thank you|for me|real quick|right away|asap|after all|after|fr|fr fr|for real|no cap|oh|uh|um|erm|like"
    # tags and whom it is said to, with no comma: "add cheese na", "cheese too yaar", "put bread bro"
    r"|na|naa|yaar|bro|bruh|dude|fam|sis|hun|babe|mate|ya|yeah"
    # what the meal is for: "something with paneer for dinner"
    r"|for (?:dinner|lunch|breakfast|supper|tonight|tea tonight)"
    # where it has to go, said after it ("squash needs to go [on the list]"), and a copula left dangling
    # once the place went ("make sure eggs is [on the list]")
    r"|(?:needs|need|has|have|ought|got) to go|should(?: probably| really| definitely| also)? go|goes|(?:is|are)"
    # that it is used up, and sighs: "olive oil is done", "sourdough bread again ugh", "no maple syrup left"
    r"|(?:is|are|was|were) (?:done|finished|gone|all gone|used up|empty|out|sorted)|left|anymore|any more|ugh|argh|lol"
    r"|sorted|(?:we've|we have|i've|i have|we|i)(?: got)? (?:heaps|plenty|loads|lots|enough)(?: of (?:it|them|those))?"
    # a preposition the item kept of where it goes: "dog treats onto [the grocery list]"
    r"|onto|into|on there|in there|onto there"
    r"|in it|in them|inside"  # "a recipe with chickpeas in it", "with ground beef inside"
    # where it ran out and since when, and a stress word some Englishes close a request with ("add it only")
    r"|at home|in the house|since (?:yesterday|last \w+|this \w+|\w+day)|itself|only"
    # where it was bought or is for ("bananas at costco", "irn bru for the messages" - Scots for the shopping)
    r"|(?:at|from|for) (?:the )?(?:supermarket|shops?|grocers?|tesco|sainsburys|sainsbury's|asda|aldi|lidl|waitrose"
    r"|morrisons|walmart|costco|kroger|safeway|publix|wegmans|target|trader joe's|whole foods|naivas|carrefour"
    r"|quickmart|countdown|pak'?n'?save|new world|dunnes|supervalu|pick n pay|checkers|shoprite|woolworths|woolies"
    r"|coles|ntuc|fairprice|cold storage|giant|spar|co-op|iceland|meijer|hy-vee|h-e-b|heb|loblaws|no frills|sobeys"
    r"|big bazaar|dmart|albert heijn|jumbo|rewe|edeka|kaufland|migros|biedronka|zabka|żabka)"
    r"|for (?:the )?(?:messages|service|the week|the weekend|shops|shop|big shop|weekly shop|grocery run|market)"
    r"(?: (?:today|tomorrow|tonight|this morning|this afternoon|this evening|this weekend)(?: morning| afternoon| evening)?)?"
    # that it ran out, without a copula, in Singapore's and Malaysia's English: "Milo finish already"
    r"|(?:finish|finished|habis|used up|run out) already"
    # that it was bought or is no longer wanted, or still to be added: "onions is bought", "maggi no longer
    # needed", "coriander to be added", "atta for home", "the expense report completed"
    r"|(?:is|are|was|were|got|been) (?:bought|purchased|picked up|sorted|completed|done)|(?:is |are )?no longer (?:needed|required|wanted)"
    r"|(?:is |are )?not (?:needed|required|wanted)(?: anymore| any more)?|(?:is |are )?(?:to be|needs to be|must be) (?:added|bought|put)"
    r"|for (?:home|the house)|(?:is |are )?(?:completed|complete)|(?:is |are )?(?:to be|needs to be)"

    # what is left of a time limit once its number went: "chicken [in under 30 minutes]"
    r"|(?:in )?(?:under|less than|within|no more than)"
    # that the words appear, said after them: "inform when applications open comes"
    r"|comes|appears|shows up|turns up"
    # what the speaker is busy with, said after it: "peanut butter please I'm driving"
    r"|(?:i'm|i am|im) (?:driving|cooking|busy|working|at work|in the car|on the road|in a rush|in a hurry|out)"
    # who needs it, said after it: "rice we need", "toothpaste we need"
    r"|(?:we|i) (?:need|want|require)(?: it| them| some| more)?"
    # why now: "before I forget", "before I lose my mind"
    r"|before i (?:forget|lose my mind|go|leave)|while i remember|while i think of it"
    r"|before (?:i|we) (?:head|go|drive|pop|run) (?:to|out to|down to|over to) (?:the )?[\w'-]+(?: [\w'-]+)?"
    # the rest of a time limit once its number went: "eggs [in thirty minutes] or less"
    r"|or less|or under"
    # that an event will not take place, and why: "the Spanish class is cancelled", ", something came up"
    r"|(?:is|are|was|has been|got|been) (?:cancell?ed|called off|postponed|off)|(?:is|are) not happening(?: anymore)?"
    r"|isn't happening(?: anymore)?)$",
    re.IGNORECASE,
)
# What to do with it, said after it as a clause of its own: "X, remove from todos", "X, kindly close that task".
# Why the user asks, said of themselves after a comma, is no part of what they ask to keep: "Nonna's birthday
# is on the 14th, I will forget it otherwise", "rent, I can't remember", "date night, I'm sick", "order new
# contacts, it's been bugging me for weeks". (Only a clause of the speaker's memory, health or time: "the
# meeting went well, I think we got it" says what happened, and stays.)
_SPEAKER_ASIDE = re.compile(
    r",\s(?:i|i'm|im|i'll|ill|i've|ive|i'd|it's been|its been|it keeps|it's|its)\b[^,]{0,50}?"
    r"\b(?:forget|forgets|forgot|forgetting|remember|remembering|sick|ill|unwell|busy|swamped|tired|bugging|nagging"
    r"|otherwise|lose it|losing it|read it later|need it later|on my mind|slipped my mind)\b[^,]{0,30}$",
    re.IGNORECASE)
_CLAUSE_TAIL = re.compile(
    r",\s?(?:please |kindly )?(?:remove|delete|strike|cross|tick|take|close|mark) (?:it |that |this )?(?:(?:off|from|out of) )?"
    r"(?:the |my )?(?:todos|to-dos|tasks|task|list|to-do list|todo list|to do list)$", re.IGNORECASE)
# The shop an item comes from, by its name, after it: "capsicum from Woolies", "plantain at Coles", "milk
# from NTUC" (capitals only: "chocolate from the bakery" is tidied by _TAIL, "cheese from home" is kept).
# ("Pick n Pay" keeps its "n")
_SHOP = re.compile(r" (?:from|at) (?:the )?(?:[A-Z][\w'&-]*)(?: (?:n|N|&) [A-Z][\w'&-]*)?(?: [A-Z][\w'&-]*)?$")
# "a dozen eggs", "a few apples": the article is part of the amount (slots.QUANTITY).
_ARTICLE = re.compile(r"^(?:the|a|an|my|our|some) (?!(?:" + "|".join(sorted(QUANTITY)) + r")\b)", re.IGNORECASE)
# "scratch eggs off the list": not "eggs off"; "put cordial down on the list": not "cordial down"
# (and when it is wanted: a list of things holds no day, "avocados this week")
_ITEM_TAIL = re.compile(r" (?:off|off of|down|finish|finished|habis|no more(?: already| left)?|not need(?:ed)?"
                        r"|(?:for )?(?:this week|this weekend|next week|today|tonight|tomorrow|later)|first"
                        # when and where it ran out, said after it: "rice yesterday", "toilet paper here", "Taytos
                        # left in the press", "the Goldfish crackers AGAIN"
                        r"|yesterday|last night|this morning|again|here|at home|at the moment|atm|anymore|any more|left"
                        # that some is still had (Chinese English): "dumpling wrappers still have at home"
                        r"|still have|still got"
                        r"|left (?:in|at) (?:the |my |our )?[\w'-]+"
                        r"|in the (?:press|presses|cupboard|cupboards|fridge|freezer|pantry|house|flat|apartment|dorm)"
                        r"|on it|onto it|to it"  # "put butter on it" once "it" was the list
                        # where it is kept at home: "dishwashing liquid in the pantry", "batteries for the drawer"
                        r"|(?:in|from|for) the (?:drawer|cupboard|cupboards|fridge|freezer|pantry|larder|cabinet|garage"
                        r"|shed|kitchen|bathroom|house)"
                        # where it ran out, away from home: "cheese rolls at the bach", "milk at the office"
                        r"|at (?:the |my |our )(?:bach|crib|cottage|cabin|caravan|office|beach house|lake house|flat|work"
                        r"|campsite|holiday house))$",
                        re.IGNORECASE)
# A clause of the speaker's after the thing: "tortillas I buy already", "sparkling water but let's",
# "ranch before I head to Meijer" (a person's words after a joining word; "you" only so: "thank you cards").
_ITEM_CLAUSE = re.compile(
    r",? (?:(?:but|before|after|when|because|cause|cos|coz|since|until|till|while|if|as|so|and) "
    r"(?:i|i'll|i'm|i've|i'd|we|we'll|we're|we've|you|you'll|y'all|ya|they|let's|lets)"
    # how long it keeps, said after it: "the cabbage in the fridge before it goes off"
    r"|,? before (?:it|they|that|those) (?:goes|go|going|gets|get|turns|turn|spoils|spoil|expires|expire)"
    # (without a joining word only where it says the thing is had: "tortillas I buy already"; "ag man, we need
    # boerewors" and "my daughter reminds me that we require prunes" name the thing after the pronoun)
    r"|(?:i|we|they) (?:already )?(?:buy|bought|got|have|had|grab|grabbed|picked up|will buy)(?: it| them)?(?: already)?$"
    # none at home, said after it: "fish sauce we don't have in house"
    r"|(?:i|we) (?:don't|dont|do not|nuh) (?:have|got)(?: it| them| any)?(?: in (?:the )?house| at home)?$)"
    r"\b.*$", re.IGNORECASE)
# Putting an item on, said around it and left on an item read out of a follow-up ("chuck limes on too");
# the verb only with its particle, so "pop tarts" and "stick of butter" stay items.
PUT_VERBS = frozenset({"chuck", "pop", "stick", "bung", "throw", "toss", "put", "add", "write", "jot"})
_PUT_PARTICLES = frozenset({"on", "in", "down"})
# Buying it, said before it: "i need buy rice" once "i need" went.
_ITEM_HEAD = re.compile(
    r"^(?:to )?(?:buy|purchase|pick up|grab|get some|get more|add|put|write|jot|jot down|write down) (?=\S)"
    # who it is for, left after the verb went: "add for me fish sauce" read as "me fish sauce"
    r"|^(?:for )?me (?=\S)"
    # what introduces one more, or corrects: "one more thing, eggs", "I said soy milk"
    r"|^(?:and )?one more thing,? |^(?:no,? )?i (?:said|meant|mean) (?=\S)"
    # that it is still to be bought, and no more wanted: "I must still buy quark", "is need to buy buckwheat",
    # "we don't need anymore kefir" (once "we don't need" went)
    r"|^(?:(?:i|we|is) )?(?:must|should|still|also|need to|needs to|have to|gotta)(?: still)? (?:buy|get|grab|pick up) (?=\S)"
    r"|^(?:any ?more|no more|no longer) (?=\S)"
    # who wants it, said before it: "the kids want juice boxes" (a thing's head only: a note keeps "the
    # Hendersons want the deck stained")
    r"|^(?:the |my |our )?[\w'-]+ (?:want|wants|asked for|asks for|keep asking for|keeps asking for) (?=\S)"
    r"|^(?:gonna|going to) need (?:more |some )?(?=\S)"
    # who used it up, said before it: "the kids finished the juice boxes", "toddler ate all the Cheerios"
    r"|^(?:the |my |our )?[\w'-]+ (?:finished|ate|drank|used up|polished off|went through)(?: up)?(?: all)?(?: of)? (?=\S)"
    # that it is done, said before it: "finally done with the snow tire swap", "I have finish renew my passport",
    # "I did lab report"
    r"|^(?:i'm |im |i am |i've |ive |i have |i |we're |we are |we've |we )?(?:finally |just |all |already )?(?:done with"
    r"|finished with|through with|did|done|finish|finished|completed|sorted) (?=\S)"
    # a need said as what would help: "we could use some saltines", "might could use white bread" (Southern US)
    r"|^(?:(?:we|i|y'all) )?(?:might |sure |really )?could (?:really |sure )?use (?:some |more |a few |a little )?(?=\S)"
    # that it is missing: "is missing salted cod", "we're missing oat milk"
    r"|^(?:(?:is|are|we're|we are|i'm|im) )?missing (?=\S)"
    # a hedged wish for it: "I was thinking maybe we could get avocados", "it might be nice to have coffee beans"
    r"|^(?:(?:i was|i'm|i am) thinking |i think |i thought )?(?:maybe |perhaps )?(?:we|i) (?:could|should|might|may)"
    r" (?:maybe |also )?(?:get|buy|grab|use|do with|pick up) (?:some |more )?(?=\S)"
    r"|^it (?:might|would|could|'d) be (?:nice|good|great|handy) to (?:have|get) (?:some |more )?(?=\S)"
    # that it was got, said before it: "I picked up bread and butter, take them off"
    r"|^(?:(?:i|we) )?(?:just |already )?(?:picked up|bought|grabbed) (?=\S)"
    # whom it is for and what it is about, said before it: "add for me the dates", "nvm on the oat milk"
    # ("get me a ride" keeps its "me": a thing got for the speaker is seldom shopping)
    r"|^(?:for )?me (?=the \S)|^on the (?=\S)", re.IGNORECASE)
# An item that is a command about another item ("add it", "take them off"): no item.
_COMMAND_ITEM = re.compile(
    r"^(?:(?:you can|can you|could you|you could|please|pls|just|so) )?(?:\w+ )(?:it|them|that|this|those|these)(?: \w+)?$",
    re.IGNORECASE)


# A tick after a thing, and what is said after it: "hot cheetos ✅ bought".
_TICKED = re.compile(rf"[{TICKS}].*$")  # (no leading \s*: a run of spaces would be scanned from each of its places)
# Pictures said after a value: faces, hands, hearts (and their joiners and variation selectors).
# Only where a run of them starts (the lookbehind): tried from every position of a long run, `+$` alone
# is quadratic ("   …x" took 0.4 s of CPU in the backtracking fuzz).
_EMOJI_TAIL = re.compile(rf"(?<![\s{PICTURES}{JOINERS}])[\s{PICTURES}{JOINERS}]+$")


def tidy_text(value: str, *, article: bool = False, item: bool = False) -> str:
    """The value without the wrapping words above; unchanged when nothing would be left.

    article: a leading article or "my" goes too; item: an item of a list (" off" goes).
    """
    text = " ".join(value.split()).strip(" ,;:-").lstrip("+= ")  # (a leading "+" of "todo + call mum"; "C++" keeps its own)
    text = _EMOJI_TAIL.sub("", text) or text  # "the juice boxes AGAIN 🙄": the face says how it felt
    head, colon, tail = text.partition(": ")
    if colon and _says_something(tail) and _only_place(head):
        text = tail  # "put it on my calendar: lunch with Sam": what follows the colon is the value
    if item:
        text = _without_putting(text)
        text = _TICKED.sub("", text).rstrip() or text  # "ginger beer ✅ got it": the tick and what follows say it is done
    rules = (_HEAD, _CLAUSE_TAIL, _SPEAKER_ASIDE, _TAIL) + ((_ARTICLE,) if article else ()) + (
        (_ITEM_TAIL, _ITEM_HEAD, _SHOP, _ITEM_CLAUSE) if item else ())
    changed = True
    while changed:
        changed = False
        for rule in rules:
            cut = without_quotes(rule.sub("", text).strip(" ,;:-"))  # 'called "quarterly review"'
            if cut != text and _says_something(cut):
                text, changed = cut, True
    return text


def _without_putting(text: str) -> str:
    words = text.split()
    if len(words) > 2 and words[0].casefold() in PUT_VERBS and words[-1].casefold() in _PUT_PARTICLES:
        return " ".join(words[1:-1])
    return text


# "and one more thing, eggs": what introduces the next item, read as an item of its own.
_ONE_MORE = re.compile(r"^(?:and |oh |also )?(?:one more thing|another thing|one other thing|something else)$", re.IGNORECASE)


# An item that is a statement of the speaker's, said after the things in a list of its own: "put scallions
# on the list, we're plumb out", "apples and peanut butter, I'm driving".
_STATEMENT_ITEM = re.compile(
    r"^(?:(?:or|and|but|so|cause|because|coz|cuz) )?(?:i'm|im|i've|ive|i'd|i'll|we'll|we're|we've|we'd|they're|you're|it's|i am|we are"
    r"|it is|they are|you are|before i|while i|since i|as i|when i"
    # that the speaker forgot it before: "also olive oil please, I forget before"
    r"|i (?:forget|forgot|almost forgot|nearly forgot)|i always forget)(?: |$)", re.IGNORECASE)


# Who is out of something, left once the rest of the clause went: "we're nearly", "I'm all".
_DANGLING = re.compile(r"^(?:we're|we are|were|i'm|im|i am)(?: (?:nearly|almost|all|totally|completely|basically|just))?$",
                       re.IGNORECASE)
# A sound said before the things, never a thing: "ope, limes too", "um, eggs and milk".
_INTERJECTION_ITEMS = frozenset({"ope", "oops", "whoops", "oh", "um", "uh", "erm", "hmm", "ok", "okay", "nvm", "lol", "ah",
                                 "ooh", "aah", "yeah", "yep", "right", "so", "well", "only", "itself", "too", "also",
                                 # a request's please, left as a piece once its verb went: "..., help me remove"
                                 "help me", "help", "sorry", "please", "pls", "thanks", "thank you"})


def tidy_items(items: list[Any]) -> list[Any]:
    """Each item tidied (articles too); items that are commands about another item dropped."""
    out: list[Any] = []
    dangling = False
    # texting's "n" between two things is "and": "doritos n dip" (never "&": "Marks & Spencer" is one name)
    items = [part for item in items for part in (item.split(" n ") if isinstance(item, str) else [item])]
    # the statements said after the last thing ("add juice boxes, the twins drank the lot") are why; a statement
    # among the things is left to the reading of the whole message
    aside_from = len(items)
    while aside_from > 1 and isinstance(items[aside_from - 1], str) and tells(items[aside_from - 1]):
        aside_from -= 1
    for n, item in enumerate(items):
        if not isinstance(item, str):
            out.append(item)
            continue
        if _DANGLING.match(item.strip()):
            dangling = True
            continue  # "we're nearly [out of those]": who is out, once what they are out of went; never a thing
        if (_COMMAND_ITEM.match(item.strip()) or _COMMAND_ITEM.match(tidy_text(item))
                or item.strip().casefold() in PUT_VERBS or _ONE_MORE.match(item.strip())
                or _STATEMENT_ITEM.match(tidy_text(item, item=True))
                or item.strip(" ,.!").casefold() in _INTERJECTION_ITEMS or (n >= aside_from and tells(item))
                or judging_words(set(item.casefold().strip(" ,.!").split()) - {"so", "very", "really"})) and len(items) > 1:
            continue  # "we've run out of soda, add it" read as the items "soda" and "add it"
        tidy = tidy_text(item, article=True, item=True)
        if len(items) == 1 and (reads_as_clause(item) or reads_as_clause(tidy)):
            # the one thing, still a clause after the known wrappers went ("can we get pop tarts", "it lacks
            # baguette at home"): the things it is about ("we're low on lettuce and tomatoes": both). (Among
            # several, a clause is a story told beside the things, and goes: "the kids have a bake sale Friday")
            things = [tidy_text(t, article=True, item=True) for t in things_of(item) or things_of(tidy)]
            things = [t for t in things if _says_something(t)]
            for thing in things[:-1]:
                if thing.casefold() not in (o.casefold() for o in out if isinstance(o, str)):
                    out.append(thing)
            tidy = things[-1] if things else tidy
        if len(tidy.split()) > 1 and (cut := without_when(tidy)) != tidy and (
                shorter := tidy_text(cut, article=True, item=True)) != cut:
            # "tomato sauce for the shops tomorrow arvo": when it is bought, said with where, is not what is
            # bought (a day alone stays: "lunch with Sam friday" is no item, and the day says so)
            tidy = shorter
        # where it goes, said after it with its own "the" ("Gouda on the boodschappen [list]"), and a
        # preposition left at its end ("beef with") are no part of the thing
        tidy = without_dangling(placed_after(tidy))
        if names_nothing(tidy) and len(items) > 1:
            continue  # "chilli sauce, inside [the list]", "oatcakes, [the messages] list": no thing at all
        if tidy and tidy.casefold() not in (o.casefold() for o in out if isinstance(o, str)):
            out.append(tidy)
    return out or ([] if dangling else items)


def tidy_args(args: Mapping[str, Any], kinds: Mapping[str, str], examples: Sequence[str] = (),
              fitted: str = "", *, writes: bool) -> dict[str, Any]:
    """`args` with each free-text (kind "text") and list-of-text value tidied.

    A parameter that the function's examples introduce with "my" or "the" ("cancel my
    {title} appointment", "when is my next {title}") names something that exists: the user's
    "my" or "the" before it belongs to the phrase, not to the name ("move the book club").
    Unless the example that fitted (`fitted`) introduces it with a preposition: "my call with
    the landlord" is with "the landlord".

    writes: the function makes something new; the title it is given is its name, without the speaker's
    "my" or "the" ("put my eye test in the calendar" makes "eye test").
    """
    out = dict(args)
    for name, value in args.items():
        kind = kinds.get(name)
        if kind == "text" and isinstance(value, str) and _ONLY_PLACE.match(value.strip()) and len(args) > 1:
            del out[name]  # "add lunch friday at noon to my calendar": "my calendar" is no location
        elif kind == "text" and isinstance(value, str):
            refers = _refers(name, examples)
            article = refers and not _introduced(name, fitted)
            out[name] = without_dangling(tidy_text(value, article=article), copula=True)
            if writes and name == "title" and not refers:
                out[name] = _NEW_NAME.sub("", out[name], count=1) or out[name]
            # (a value read to find things takes no day when the function has none: "what could I do with
            # mince tonight" looks for mince; a span of time stays for its own parameter, "in 30 minutes")
            if not any(k in ("day", "moment") for k in kinds.values()):
                cut = without_when(out[name])
                if refers or (not writes and not _SPAN_OF_TIME.search(out[name][len(cut):])):
                    out[name] = cut
        elif kind == "list" and isinstance(value, list):
            out[name] = tidy_items(value)
    return out


_SPAN_OF_TIME = re.compile(r"\b(?:mins?|minutes?|hours?|hrs?|seconds?|secs?)\b", re.IGNORECASE)
# The speaker's own word before a new thing's name ("my hair appointment"); "The Lion King" keeps its capital "The".
# (and its article: "got a yoga class Friday 6pm" makes "yoga class"; "A Quiet Place" keeps its capital "A")
# ("a lot", "a couple" say how much, not which: they stay)
_NEW_NAME = re.compile(r"^(?:[Mm]y|[Oo]ur|the|a|an) (?!(?:lot|bit|few|couple|little|number|ton|load)\b)(?=\S)")


def _refers(name: str, examples: Sequence[str]) -> bool:
    mark = re.compile(r"\b(?:my|the)\b[\])|\s]*(?:\w+[\])\s]*)?\{" + re.escape(name) + r"\}", re.IGNORECASE)
    return any(mark.search(example) for example in examples)


def _introduced(name: str, example: str) -> bool:
    mark = re.compile(r"\b(?:with|about|for|at|of|from|by|regarding)\)?\s*\{" + re.escape(name) + r"\}", re.IGNORECASE)
    return bool(mark.search(example))


def _only_place(text: str) -> bool:
    """Nothing but pronouns, small words and where things are kept ("it on my calendar")."""
    words = re.findall(r"[\w'-]+", text.casefold())
    return bool(words) and all(w in FILLERS or w in PRONOUNS or re.fullmatch(_PLACES, w) for w in words)


def _says_something(text: str) -> bool:
    words = re.findall(r"[\w'-]+", text.casefold())
    return any(w not in FILLERS and w not in PRONOUNS for w in words)


# A number of units inside a value ("in under 30 minutes", "30 minutes or less"): a limit, not the value.
_AMOUNT = re.compile(
    r"(?:^|\s)(?:(?:that |which )?(?:takes?|taking) )?(?:in |within |under |in under |less than |in less than "
    r"|no more than |at most |max |up to )?(\d+) ?(\w+)(?: or less| or under| max| tops| at most)?(?=$|\s)",
    re.IGNORECASE,
)


# What is left of "a recipe I can cook in under 20 minutes" once the time limit went: no value.
_RELATIVE = re.compile(r"^(?:that |which )?(?:i|we|you) (?:can|could|should|would|will|might) \w+$", re.IGNORECASE)


def redistribute(args: dict[str, Any], slots: Mapping[str, Any], param_words: Mapping[str, frozenset[str]]) -> None:
    """Move modifiers a free-text value swallowed to the parameters they belong to, in place.

    A typical value of another text parameter ("any good italian" holds the cuisine
    "italian") and a number of the unit a number parameter is named for ("under 30
    minutes" is max_minutes 30) are that parameter's, wherever the pattern's slot put them.
    A value left with nothing but small words goes.
    """
    for name, value in list(args.items()):
        slot = slots.get(name)
        if slot is None or slot.kind != "text" or not isinstance(value, str) or slot.choices:
            continue
        rest = value
        for other, other_slot in slots.items():
            if other in args or other == name:
                continue
            if other_slot.kind == "text" and other_slot.choices:
                rest = _take_typical(args, other, other_slot.choices, rest)
            elif other_slot.kind in ("int", "number"):
                rest = _take_amount(args, other, param_words.get(other, frozenset()), rest)
        if rest != value:
            if _says_something(rest) and not _RELATIVE.match(rest):
                args[name] = tidy_text(rest)
            elif len(args) > 1:
                del args[name]


def _take_typical(args: dict[str, Any], name: str, choices: Sequence[str], text: str) -> str:
    words = text.split()
    lowered = [w.casefold().strip(",.!?") for w in words]
    for size in (2, 1):
        for i in range(len(words) - size + 1):
            said = " ".join(lowered[i : i + size])
            if said in (c.casefold() for c in choices):
                args[name] = said
                return " ".join(words[:i] + words[i + size :])
    return text


def _take_amount(args: dict[str, Any], name: str, words: frozenset[str], text: str) -> str:
    for m in _AMOUNT.finditer(text):
        unit = m.group(2).casefold().rstrip("s")
        if any(unit == w.rstrip("s") or (len(unit) >= 3 and w.startswith(unit)) for w in words):
            args[name] = int(m.group(1))
            return (text[: m.start()] + " " + text[m.end() :]).strip()
    if any(w.rstrip("s") == "minute" for w in words):
        return _take_duration(args, name, text)
    return text


# Words that bound a length of time said before it: "in under half an hour", "that takes less than an hour".
_BOUNDING = frozenset("in within under than less takes take taking that which max at most no more up to".split())


def _take_duration(args: dict[str, Any], name: str, text: str) -> str:
    """A length of time said in words ("half an hour", "an hour and a half"), in minutes, for a parameter
    counted in minutes; the words that bound it go with it."""
    words = text.split()
    said = [w.casefold().strip(",.!?") for w in words]
    for i in range(len(said)):
        found = spoken_minutes(said, i)
        if found is None:
            continue
        start = i
        while start > 0 and said[start - 1] in _BOUNDING:
            start -= 1
        args[name] = found[0]
        return " ".join(words[:start] + words[found[1]:]).strip(" ,")
    return text


# Politeness around a whole request. Most of it weighs little anyway (lexicon.FILLERS), but
# "go ahead and add X" would otherwise read as a list ("go ahead", "add X").
# One phrase at a time, in a loop: a repeated group of alternatives under `+` (the obvious
# pattern) backtracks exponentially on a message made of them (tests/security/test_regex_backtracking.py).
# Thanks in the writer's first language, said first or last ("shukran. what is ...", "..., merci").
_THANKS_ABROAD = ("merci|gracias|obrigad[oa]|danke|grazie|arigato|asante|shukran|dhanyavaad|dziękuję|spasibo"
                  "|kamsahamnida|cảm ơn")
_POLITE_OPENING = re.compile(
    r"^(?:ok(?:ay)?|so|hey|please to|please|pls|just|go ahead and|i need you to|i want you to|i'd like you to"
    # back to the request after a story: "..., the car failed its WOF. anyway add ice cream"
    r"|anyway|anyhow|anyways|regardless"
    # a need said as something to remember: "remember we need cordial" is the need
    r"|remember(?: that)?(?= (?:we|i) (?:need|needs)\b(?! to\b))"
    # what comes first, said before it: "actually first, add stamps"
    r"|(?:actually |but )?first(?=,)|before that(?=,)|righto|right then|alright|all right|oye|oi"
    # British endearments that ask a favour: "be a love and put crumpets on the list"
    r"|be an? (?:love|dear|star|darling|doll|angel|gem|sweetheart) and|do me a favou?r and"
    # chat-speak that says how, never what: "ngl we need hot cheetos", "tbh add oat milk"
    r"|ngl|tbh|tbf|lowkey|highkey|honestly|literally|basically|like|no cap|deadass|istg|ong|fr fr|bruh|yo"
    # asking to ask, first: "I wanted to ask if you could add ...", "I was gonna ask, can you ..."
    r"|(?:i|we) (?:wanted|was going|was gonna|were going|wanna|want) (?:to )?ask(?: you)?,? (?:if|whether) you (?:could|can|would)"
    r"|(?:i|we) (?:wanted|was going|was gonna|wanna) (?:to )?ask,?(?= (?:can|could|would) you)"
    # Indian English for "do what is needed": "please do the needful and add curd"
    r"|(?:please |kindly )?do the needful(?: and)?"
    # a letter's salutation: "Dear Sidekick,", "Hello there,"
    r"|dear \w+|hello there|hi there"
    # the wake word of another assistant, said out of habit: "Hey Google, I need baby wipes"
    r"|(?:hey|ok|okay|hi) (?:google|alexa|siri|sidekick|assistant|cortana|bixby)|(?:google|alexa|siri|cortana|bixby)(?=,)"
    # a request put formally, in Kenyan and Indian English: "I am requesting you to add ...", "I request you to ..."
    r"|(?:i am|i'm|im|we are|kindly) (?:requesting|asking) you to|(?:i|we) (?:request|kindly request|ask) you to"
    r"|(?:i|we) (?:was|were|am|are) hoping (?:that )?you (?:could|would|can|will)|(?:i'm|im|i am|we're|we are) (?:needing|wanting)(?: to)?"
    r"|would you mind|do you mind|if you don't mind|mind and|mind you|mind(?= \w+ing\b)|(?:i'd|i would|we'd|we would) love(?: to)?"
    r"|could you please|can you please|could you|can you|would you|will you|(?:could|can|would|will) (?:ya|u)"
    # leave given, not asked: "you can take the Q2 deck off my task list"
    r"|you can(?: go ahead and| just)?(?= \w+ (?:the|my|our|it|that|this|\w+ (?:off|on|to|from)\b))"
    # sorry for asking, said first: "sorry to bug you, but could you add ..."
    r"|sorry to (?:bug|bother|trouble|pester) (?:you|ya)(?:,? but)?"
    r"|would it be too much (?:trouble|bother) to|if it'?s not (?:a|too much) (?:bother|trouble)"
    # a favour asked as a question: "would it be possible to add ...", "could I trouble you to put ..."
    r"|(?:would|will) it be possible to|is it possible to|is there any way (?:you could|to)"
    # "any chance you could put brown sauce on the list", "is there a chance u can add ..."
    r"|(?:is there )?(?:any|a|some) chance (?:you|u|ya) (?:could|can|would|will|might)|any way (?:you|u) (?:could|can)"
    r"|do you (?:think|reckon) you (?:could|can)|could i (?:trouble|ask|get) you to|may i ask you to"
    # formal and old-fashioned requests: "I should be most grateful if you would add ...",
    # "would you be so kind as to ...", "please be good enough to ...", "dear assistant, ..."
    r"|kindly|dear (?:assistant|sidekick|bot)|(?:i|we) (?:should|would|'d) be (?:most |very |really |so |much )?(?:grateful|obliged)"
    r" if you(?: would| could)?|(?:i|we) (?:was|were) wondering if you (?:could|would)"
    r"|be (?:so kind|good enough|kind enough)(?: as)? to|if you (?:could|would)"
    # a shrug or a joke taken back, said first: "ok whatever, add salsa", "lol jk, undo"
    r"|whatever(?=,)|(?:lol |haha )?(?:jk|j/k|just kidding|kidding)(?=,)"
    # "help me" as a request's please (Chinese and Nigerian English): "help me remove", "help me to add ..."
    r"|help me(?: to)?(?= (?:add|put|remove|delete|buy|check|find|book|set|write|note|save|take|cancel|move|clear)\b)"
    # a greeting before the request: "hiya, what have I on the shopping list"
    r"|(?:hi|hiya|heya|hello|howdy|g'day|morning|good morning|afternoon|good afternoon|evening|good evening)(?=,)"
    # thanks for the last answer, said before the next request: "shukran. what is in the list now?"
    rf"|(?:thanks|thank you|ty|thx|cheers|{_THANKS_ABROAD})(?=[.!])[.!]*"
    r")[, ]+(?=\S)"
    # asking for a recommendation as a question: "what's a good X" asks for "a good X"
    r"|^(?:what(?:'s| is| are|s)|do you (?:know|have)) (?=(?:a|an|any|some) (?:good|nice|great|decent|tasty|quick|easy"
    r"|simple) \S)",
    re.IGNORECASE,
)
_POLITE_CLOSING = re.compile(
    r",? (?:real quick|right away|asap|for me please|for me|please|pls|plz|thanks|thank you|thank you very much|thanks heaps"
    r"|thanks a lot|thanks so much|many thanks|much appreciated|if you please|if you would|if you could"
    r"|at your (?:earliest )?convenience|when you (?:can|get a chance)|no worries if not|porfa|por favor|mate"
    # thanks in more words and in the writer's first language: "..., thank you so much", "..., merci"
    rf"|thank you so much|ty so much|thanks a million|merci beaucoup|danke sch[oö]n|asante sana|{_THANKS_ABROAD})$"
    # whom it is said to, after a comma or a thanks: "plus Nanaimo bars, thanks bud", "Kerrygold too, good man",
    # "coriander also yaar"
    r"|(?:,|,? (?:thanks|thank you|thx|ty|cheers|ta)) (?:bud|buddy|man|mate|pal|dude|bro|sis|fam|boss|chief|good man"
    r"|my man|hun|love|my dear|dear)$| yaar$| yaara$"
    # a question tagged on, asking nothing more: "write down that the bin goes out Tuesday, would ya"
    r"|,? (?:would|will|could|can|won't|wouldn't|can't) (?:ya|you|u|ye|yeh|yah)\??$|, (?:would|will|could)\??$"
    # an acknowledgement after a comma closes the request: "take bread off the list, got it"
    r"|, ?(?:got it|cheers|ta|thx|ty|thank u|nice one|ok|okay)$"
    # New Zealand's thanks and all-good, last: "add feijoas to the list, chur", "... sweet as bro"
    r"|,? (?:chur|sweet as|cheers|ta)(?: bro| mate| love| heaps)?$"
    # Irish English closes a request with "so": "add barry's tea to the shopping list so"
    r"| so$"
    # why now, said after: "jam as well while you're at it", "pretzels please, I forgot it"
    r"|,? (?:don'?t|do not|dont) wait$|,? while you'?re at it|,? (?:before i (?:forget|lose my mind)|while i (?:remember|think of it))$"
    # whom it is said to, last (never a thing to buy: no "sugar" or "honey" here): "..., habibi", "bestie ty"
    r"|,? (?:habibi|habibti|bestie|hon|darling|darlin'?|love|dear|buddy|pal|sweetie|sweetheart|y'all|my friend|chief|boss)"
    r"(?: ty| thx| thanks| thank you)?$"
    # ... and a sweet word after the place, where no thing goes: "add it to the list, sugar"
    r"|(?<=list),? (?:sugar|honey|hun|babe|sweetie pie|sugar pie|sweet pea)$"
    # laughter, an apology and a blessing, said last: "red bull lol", "add coffee too, sorry", "buns, you betcha"
    r"|,? (?:lol|lmao|haha|hahaha|hehe|sorry|bless you|bless your heart|you betcha|betcha)$"
    # why it is off, said after: "cancel the team dinner, something came up"
    r"|,? (?:something|stuff|things) (?:came|has come|have come) up$"
    # why now, said after the place: "... on the shopping list before I head to Meijer"
    r"|,? before (?:i|we) (?:head|go|drive|pop|run|leave)(?: (?:to|out to|down to|over to|for) (?:the )?[\w'-]+(?: [\w'-]+)?)?$"
    r"|, ?i (?:forgot|nearly forgot|almost forgot)(?: it| them| that)?$"
    # a letter's sign-off, with the writer's name: "Yours sincerely, Margaret", "Kind regards, Tom"
    r"|[.,]? (?:yours (?:sincerely|faithfully|truly)|(?:kind |best |warm |warmest )?regards|best wishes|many thanks"
    r"|with thanks|thanking you|sincerely)(?:,? [\w.'-]+(?: [\w.'-]+)?)?$"
    # "for real", said after: "need more takis fr"
    r"| (?:fr|fr fr|for real|no cap|ong)$",
    re.IGNORECASE)


# Whom the request is said to, between commas or at the end: "we're out of black pudding, love, pop it on
# the list", "throw cornmeal on there too, hon", "anything on tomorrow, love?"
_VOCATIVE = re.compile(
    r",\s*(?:love|luv|hon|honey|dear|darling|babe|mate|pet|sweetie|sweetheart|y'all|pal|buddy|chief|boss|bro|dude"
    r"|my dear|my love)\s*(?=,|[.!?]*$)",
    re.IGNORECASE,
)


def without_vocative(text: str) -> str:
    """The message without whom it is said to ("..., love, pop it on the list")."""
    cut = _VOCATIVE.sub("", text)
    return cut if cut.strip() else text


def _strip_repeated(pattern: re.Pattern[str], text: str, *, at_end: bool) -> str:
    while True:
        m = pattern.search(text)
        if m is None or not m.group(0):
            return text
        text = text[: m.start()] if at_end else text[m.end():]


def without_politeness(text: str) -> str:
    """The request without the politeness that opens or closes it; unchanged when nothing would be left."""
    opened = _strip_repeated(_POLITE_OPENING, without_vocative(text.strip()), at_end=False)
    body = opened.rstrip(".!?")
    end = opened[len(body):]
    closed = _strip_repeated(_POLITE_CLOSING, body, at_end=True)
    cut = closed + end if closed != body else opened
    return cut if _says_something(cut) else text


_SAME_AS: dict[str, tuple[str, ...]] = {word: group for group in SYNONYMS for word in group}


def fill_typical(args: dict[str, Any], slots: Mapping[str, Any], said: str) -> None:
    """Fill, in place, a parameter the fit left empty with a typical value of it the request says
    anywhere outside the other values: "recommend a mexican dish" fitted as "suggest a recipe" is
    still a Mexican one. A value inside another argument ("thai basil") stays where it is."""
    low = said.casefold()
    taken = " ".join(v.casefold() for v in args.values() if isinstance(v, str))
    for name, slot in slots.items():
        if name in args or slot.kind != "text" or not slot.choices:
            continue
        for choice in sorted(slot.choices, key=len, reverse=True):
            word = choice.casefold()
            # the choice, or a word that means it everywhere ("veggie" for "vegetarian")
            if any(_said_alone(w, low) and not _said_alone(w, taken) for w in _SAME_AS.get(word, (word,))):
                args[name] = word
                break


def _said_alone(word: str, text: str) -> bool:
    """`word` occurs in `text` as whole words (no regex over user text: plain searches, linear)."""
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "-") and not (after.isalnum() or after == "-"):
            return True
        start = text.find(word, start + 1)
    return False


def drop_echoes(args: dict[str, Any], slots: Mapping[str, Any], required: Sequence[str], own_words: frozenset[str],
                canon: Any, reads: bool = False) -> None:
    """Drop, in place, an optional free-text value made only of the function's own template words
    ("find me a quick vegetarian dinner": once "vegetarian" went to diet, "quick dinner" is no
    ingredient, it is what suggest is about), when another argument still says what is asked or
    the function only reads ("easy dinner ideas" is every suggestion; a change needs its target)."""
    for name, value in list(args.items()):
        slot = slots.get(name)
        if slot is None or slot.kind != "text" or slot.choices or name in required or not isinstance(value, str):
            continue
        if len(args) < 2 and not reads:
            return
        words = [w for w in re.findall(r"[\w'-]+", value.casefold()) if w not in FILLERS]
        if words and all(canon(w) in own_words for w in words):
            del args[name]


_OWN_HEAD_LINKS = frozenset({"of", "for", "about", "on", "called", "named", "titled"})
MAX_OWN_HEAD = 3  # "the full recipe for", "the schema of": a few words name the kind of thing


def strip_own_head(args: dict[str, Any], slots: Mapping[str, Any], own_words: frozenset[str], canon: Any) -> None:
    """Take off, in place, the function's own words that open a free-text value before "of", "for"...
    ("the schema of the absences" for get_schema is "absences"; "the recipe for lasagna" is "lasagna"):
    they name the kind of thing the function is about, not which one."""
    for name, value in list(args.items()):
        slot = slots.get(name)
        if slot is None or slot.kind != "text" or not isinstance(value, str):
            continue
        words = value.split()
        for i, word in enumerate(words[: MAX_OWN_HEAD + 2]):
            if word.casefold() not in _OWN_HEAD_LINKS:
                continue
            head = [w for w in words[:i] if w.casefold() not in FILLERS]
            if head and all(canon(w) in own_words for w in head):
                rest = " ".join(words[i + 1 :])
                rest = _ARTICLE.sub("", rest) if _says_something(_ARTICLE.sub("", rest)) else rest
                if _says_something(rest):
                    args[name] = rest
            break


# A day read off the user's words needs some "now"; which day it is does not matter, only that it is one.
_ANY_NOW = datetime(2000, 1, 3, 12, 0)
MAX_WHEN_WORDS = 6


def without_when(value: str) -> str:
    """A name of something that exists without the day or time said with it ("lunch with Sam on
    friday", "tomorrow's dentist", "3pm team sync"), for a function that takes no day or time:
    the event is found by its title's words, and a day there matches no title."""
    words = value.split()
    low = [w.casefold().strip(",.") for w in words]
    if len(low) > 1 and low[0].endswith("'s") and parse_moment([low[0][:-2]], _ANY_NOW) is not None:
        words, low = words[1:], low[1:]  # "tomorrow's dentist"
    elif len(low) > 1 and parse_moment(low[:1], _ANY_NOW) is not None and low[0][:1].isdigit():
        words, low = words[1:], low[1:]  # "3pm team sync"
    for k in range(max(1, len(low) - MAX_WHEN_WORDS), len(low)):
        if parse_moment(low[k:], _ANY_NOW) is not None:  # the longest tail that names a day or a time
            cut = " ".join(words[:k])
            return cut if _says_something(cut) else value
    rest = " ".join(words)
    return rest if _says_something(rest) else value
