"""Which chat messages Sidekick takes as something to remember, recall or forget.

The rule set must be conservative: a request for an agent is never a memory."""

from __future__ import annotations

import pytest

from dreamer.sidekick.memory.extract import Forget, Recall, Remember, read_memory_intent, second_person

REMEMBERED: list[tuple[str, str]] = [
    ("I'm vegetarian", "I'm vegetarian"),
    ("I am vegetarian.", "I am vegetarian"),
    ("i'm a vegetarian!", "I'm a vegetarian"),
    ("I\u2019m vegan now", "I'm vegan now"),
    ("we're pescatarian", "We're pescatarian"),
    ("I'm lactose intolerant", "I'm lactose intolerant"),
    ("I'm gluten-free", "I'm gluten-free"),
    ("I'm on a low-carb diet", "I'm on a low-carb diet"),
    ("I am allergic to nuts", "I am allergic to nuts"),
    ("I'm severely allergic to peanuts and shellfish", "I'm severely allergic to peanuts and shellfish"),
    ("I have a peanut allergy", "I have a peanut allergy"),
    ("I live in Lyon", "I live in Lyon"),
    ("I live in Lyon, France", "I live in Lyon, France"),
    ("I work as a nurse", "I work as a nurse"),
    ("I'm from Montreal", "I'm from Montreal"),
    ("my favourite cuisine is Thai", "My favourite cuisine is Thai"),
    ("My favorite food is sushi", "My favorite food is sushi"),
    ("my name is Ada", "My name is Ada"),
    ("my wife's name is Anna", "My wife's name is Anna"),
    ("my daughter is called Zoe", "My daughter is called Zoe"),
    ("I don't eat pork", "I don't eat pork"),
    ("I do not eat pork", "I do not eat pork"),
    ("I never eat red meat", "I never eat red meat"),
    ("I can't eat gluten", "I can't eat gluten"),
    ("I don't drink alcohol", "I don't drink alcohol"),
    ("I hate coriander", "I hate coriander"),
    ("I love spicy food", "I love spicy food"),
    ("I really don't like mushrooms", "I really don't like mushrooms"),
    ("I prefer aisle seats", "I prefer aisle seats"),
    ("I'm not a fan of olives", "I'm not a fan of olives"),
    ("I have two kids", "I have two kids"),
    ("I'm trying to avoid sugar", "I'm trying to avoid sugar"),
    ("I eat no meat", "I eat no meat"),
    ("remember that I'm vegetarian", "I'm vegetarian"),
    ("Please remember that I live in Lyon.", "I live in Lyon"),
    ("Please remember that I live in Weißenburg", "I live in Weißenburg"),  # "ß" folds to two letters
    ("remember I'm vegan", "I'm vegan"),
    ("Remember: my birthday is March 3", "My birthday is March 3"),
    ("don't forget that I'm allergic to shellfish", "I'm allergic to shellfish"),
    ("remember that my partner hates onions", "My partner hates onions"),
    ("FYI I don't drink alcohol", "I don't drink alcohol"),
    ("Sidekick, I'm vegetarian, thanks", "I'm vegetarian"),
]

NOT_MEMORY: list[str] = [
    "add milk to my list",
    "add milk to my grocery list",
    "put eggs on my shopping list",
    "add vegetarian sausages to my list",
    "I need milk",
    "I want pizza tonight",
    "I'd like a recipe with chicken",
    "I would like something vegetarian",
    "plan dinner for tomorrow",
    "what's for dinner",
    "suggest a vegetarian recipe",
    "I'm hungry",
    "I'm out of milk",
    "I am going to the store",
    "I'm looking for a vegetarian recipe",
    "I'm cooking for four tonight",
    "I'm vegetarian, suggest a recipe",
    "I'm vegetarian, plan dinner for tomorrow",
    "I live in Lyon and add milk to my list",
    "I don't eat pork, plan dinner",
    "remember to buy milk",
    "remind me to call mom",
    "what is my name?",
    "I don't eat pork?",
    "is my list empty",
    "my grocery list is empty",
    "my list",
    "I like this",
    "I love you",
    "I prefer the first one",
    "I don't like that",
    "I have a meeting tomorrow at 3",
    "I don't know",
    "remember that the meeting is at 5",
    "remember that I have a dentist appointment tomorrow",
    "remember that",
    "remember that I am",
    "Straße: please remember that I live in Weißenburg",
    "I like both",
    "I love this recipe",
    "we are out of eggs",
    "my favourite recipe is pad thai, plan it",
    "i live in lyon. add milk",
    "forget the milk",
    "forget about it",
    "note that I bought eggs",
    "what do you remember about paris",
    "yes",
    "no",
    "",
    "   ",
    "I'm vegetarian " * 40,
]


@pytest.mark.parametrize(("said", "fact"), REMEMBERED)
def test_statements_about_oneself_are_remembered(said: str, fact: str) -> None:
    assert read_memory_intent(said) == Remember(fact)


@pytest.mark.parametrize("said", NOT_MEMORY)
def test_requests_and_everything_else_are_not(said: str) -> None:
    assert read_memory_intent(said) is None


def test_while_sidekick_waits_for_an_answer_only_an_explicit_remember_counts() -> None:
    assert read_memory_intent("I prefer Thai food", answering=True) is None
    assert read_memory_intent("I'm vegetarian", answering=True) is None
    assert read_memory_intent("remember that I'm vegetarian", answering=True) == Remember("I'm vegetarian")
    assert read_memory_intent("what do you remember about me", answering=True) == Recall()


@pytest.mark.parametrize(
    "said",
    [
        "what do you remember about me",
        "What do you know about me?",
        "what do you remember",
        "what have I told you about myself",
        "what's in your memory?",
        "show me what you remember",
        "list my memories",
        "please, what do you remember about me?",
    ],
)
def test_asking_what_sidekick_remembers(said: str) -> None:
    assert read_memory_intent(said) == Recall()


@pytest.mark.parametrize(
    ("said", "intent"),
    [
        ("forget that I live in Lyon", Forget(what="I live in Lyon")),
        ("Please forget that I'm vegetarian.", Forget(what="I'm vegetarian")),
        ("forget the fact that I hate coriander", Forget(what="I hate coriander")),
        ("forget what I told you about Lyon", Forget(what="Lyon")),
        ("forget memory 12", Forget(memory_id=12)),
        ("delete memory #3", Forget(memory_id=3)),
    ],
)
def test_asking_sidekick_to_forget(said: str, intent: Forget) -> None:
    assert read_memory_intent(said) == intent


@pytest.mark.parametrize(
    ("fact", "said_back"),
    [
        ("I'm vegetarian", "you're vegetarian"),
        ("I am allergic to nuts", "you are allergic to nuts"),
        ("I live in Lyon", "you live in Lyon"),
        ("My favourite cuisine is Thai", "your favourite cuisine is Thai"),
        ("I don't eat pork", "you don't eat pork"),
        ("We're vegan and our kids are too", "you're vegan and your kids are too"),
        ("My wife calls me Bob", "your wife calls you Bob"),
        ("I was born in May", "you were born in May"),
    ],
)
def test_sidekick_says_a_fact_back_in_the_second_person(fact: str, said_back: str) -> None:
    assert second_person(fact) == said_back


@pytest.mark.parametrize(("said", "fact"), [
    # (other words than the dialogue files': a fact said with a lead or a request to keep it after it)
    ("just so u know im pescatarian", "Im pescatarian"),
    ("I've become vegetarian, please remember", "I've become vegetarian"),
    ("we cook vegan at home, keep that in mind", "We cook vegan at home"),
    ("heads up, I'm gluten-free these days", "I'm gluten-free these days"),
    ("I'm a pescatarian, btw", "I'm a pescatarian"),
])
def test_a_fact_with_its_lead_or_its_keep_it_is_remembered(said: str, fact: str) -> None:
    assert read_memory_intent(said) == Remember(fact)


@pytest.mark.parametrize("said", ["I went to the shops, remember that", "we eat out on fridays, keep that in mind",
                                  "what do you remember"])
def test_keep_it_words_do_not_make_any_sentence_a_fact(said: str) -> None:
    assert not isinstance(read_memory_intent(said), Remember)
