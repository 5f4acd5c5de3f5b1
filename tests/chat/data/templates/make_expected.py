#!/usr/bin/env python3
"""Writes expected.json and snippets.json: what Jinja2, configured the way
Hugging Face transformers configures it for apply_chat_template, renders for
the templates in this folder and for small conformance snippets. The C++
tests (tests/chat/jinja_*_test.cpp) compare parley's interpreter with
these files. Needs Python 3 with jinja2 (3.1); not run by the build.

    python3 tests/chat/data/templates/make_expected.py
"""
import json
import os

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))


class Generation(Extension):
    """transformers' {% generation %} tag (it marks assistant text; renders its body)."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.Scope(body).set_lineno(lineno)


def environment():
    """As transformers.utils.chat_template_utils builds it."""

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[Generation, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env


def render(source, variables):
    try:
        return {"output": environment().from_string(source).render(**variables)}
    except Exception as e:  # the C++ side only has to fail too
        return {"error": f"{type(e).__name__}: {e}"}


CONVERSATIONS = {
    "with_system": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Hello!"},
        {"role": "assistant", "content": "  Hi there! How can I help?  "},
        {"role": "user", "content": 'Tell me a joke about "cats" & <dogs>.'},
    ],
    "thinking": [
        {"role": "user", "content": "What is 2+2?"},
        {"role": "assistant", "content": "<think>\nSimple sums.\n</think>\n\n4"},
        {"role": "user", "content": "And 3+3?"},
    ],
}
CONVERSATIONS["without_system"] = CONVERSATIONS["with_system"][1:]

# BOS/EOS texts of each model's tokenizer ("" where it has none).
SPECIAL_TOKENS = {
    "gemma-2-9b-it": ("<bos>", "<eos>"),
    "llama-2-7b-chat": ("<s>", "</s>"),
    "llama-3.1-8b-instruct": ("<|begin_of_text|>", "<|eot_id|>"),
    "meta-llama-3-8b-instruct": ("<|begin_of_text|>", "<|eot_id|>"),
    "mistral-7b-instruct-v0.1": ("<s>", "</s>"),
    "mistral-7b-instruct-v0.3": ("<s>", "</s>"),
    "mixtral-8x7b-instruct-v0.1": ("<s>", "</s>"),
    "phi-3-mini-128k-instruct": ("<s>", "<|endoftext|>"),
    "phi-3-mini-4k-instruct": ("<s>", "<|endoftext|>"),
    "phi-3.5-mini-instruct": ("<s>", "<|endoftext|>"),
    "qwen2-7b-instruct": ("", "<|im_end|>"),
    "qwen2.5-7b-instruct": ("", "<|im_end|>"),
    "qwen3": ("", "<|im_end|>"),
    "tinyllama-1.1b-chat-v1.0": ("<s>", "</s>"),
    "zephyr-7b-beta": ("<s>", "</s>"),
}


def template_cases():
    out = {}
    for name, (bos, eos) in sorted(SPECIAL_TOKENS.items()):
        with open(os.path.join(HERE, name + ".jinja"), encoding="utf-8", newline="") as f:
            source = f.read()
        renders = []
        for conversation, messages in CONVERSATIONS.items():
            for add_generation_prompt in (True, False):
                variables = dict(messages=messages, tools=None, documents=None, bos_token=bos, eos_token=eos,
                                 add_generation_prompt=add_generation_prompt)
                renders.append({"conversation": conversation, "add_generation_prompt": add_generation_prompt,
                                **render(source, variables)})
        out[name] = {"bos_token": bos, "eos_token": eos, "renders": renders}
    return out


# (template, variables): small cases pinning Jinja's semantics.
SNIPPETS = [
    # whitespace control with trim_blocks / lstrip_blocks
    ("  {% if true %}\n  x\n  {% endif %}\n  {{ 'y' }}  \n{# c #}\nz\n", {}),
    ("a\n  {#- c #}\nb  {%+ if true %}c{% endif +%}\nd", {}),
    ("{% for i in [1, 2] %}\n    {{ i }}\n{% endfor %}", {}),
    ("{%- for i in [1, 2] -%}\n  {{- i -}}  \n{%- endfor %}\nend", {}),
    ("line\n    {%- if true %} x{% endif %}", {}),
    ("a {{ 1 }} {% if true %}b{% endif %}\n\n", {}),
    ("{% if true %}\r\nwindows\r\n{% endif %}\r\n", {}),
    ("\t{% set x = 1 %}\t\n{{ x }}", {}),
    ("{{ 'a' }}\n{% if true %}\n{{ 'b' }}\n{% endif %}\n", {}),
    # literals and output
    ("{{ none }}|{{ true }}|{{ True }}|{{ 1.0 }}|{{ 1e20 }}|{{ 0.1 + 0.2 }}|{{ 1.5e-7 }}|{{ 10 ** 16 * 1.0 }}", {}),
    ("{{ [1, 'a', none, true, 2.5] }}|{{ {'a': 1, 'b': [\"it's\"]} }}|{{ (1, 2)|length }}|{{ [] }}|{{ {} }}", {}),
    ("{{ 'a\\nb\\t\\x41\\u00e9\\\\\\d' }}|{{ \"it's\" }}|{{ 'a' 'b' }}|{{ '\\'' }}", {}),
    ("{{ x }}|{{ d.missing }}|{{ l[5] }}|{{ 'abc'[10] }}", {"d": {}, "l": [1]}),
    # operators and precedence
    ("{{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 2 ** -1 }} {{ 7.5 // 2 }}", {}),
    ("{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ -2 ** 2 }} {{ 'a' ~ 1 * 2 }} {{ not 1 == 2 }} {{ 1 if 0 else 2 }}", {}),
    ("{{ 'ab' * 3 }}|{{ 3 * 'ab' }}|{{ [1, 2] + [3] }}|{{ 'a' + 'b' }}|{{ [0] * 2 }}|{{ true + 1 }}", {}),
    ("{{ 1 == 1.0 }}{{ true == 1 }}{{ 'a' in 'cat' }}{{ 2 in [1, 2] }}{{ 'k' in {'k': 1} }}{{ 'x' not in 'abc' }}"
     "{{ 1 < 2 < 3 }}{{ 3 > 2 > 2 }}{{ [1, 2] < [1, 3] }}{{ 'b' >= 'a' }}{{ none == none }}{{ {'a': [1]} == {'a': [1]} }}", {}),
    ("{{ 0 or 'x' }}|{{ 'y' and 0 }}|{{ '' or [] }}|{{ none and 1 }}|{{ x or 'undef' }}", {}),
    ("{{ 'a' ~ x ~ 1 ~ none ~ [1] }}", {}),
    ("{{ 1 // 0.1 }} {{ -7.5 // 2 }} {{ -7.5 % 2 }} {{ 0.1 is odd }} {{ 3.0 is odd }} {{ 4.0 is divisibleby 2 }}"
     " {{ {'k': 1} is lower }} {{ 'aB' is lower }}", {}),
    # tests
    ("{{ x is defined }}{{ x is undefined }}{{ none is none }}{{ 1 is number }}{{ 1 is integer }}{{ 1.0 is float }}"
     "{{ 'a' is string }}{{ {} is mapping }}{{ 'a' is iterable }}{{ [] is sequence }}{{ true is boolean }}"
     "{{ false is false }}{{ true is true }}{{ 3 is divisibleby 3 }}{{ 3 is odd }}{{ 4 is even }}{{ 'ab' is lower }}"
     "{{ 'AB' is upper }}{{ 2 is in [1, 2] }}{{ 1 is eq 1 }}{{ 1 is equalto 1 }}{{ 1 is ne 2 }}{{ 1 is lt 2 }}"
     "{{ 2 is le 2 }}{{ 3 is gt 2 }}{{ 2 is ge 3 }}{{ 1 is greaterthan 0 }}{{ 1 is lessthan 0 }}"
     "{{ raise_exception is callable }}{{ 1 is not string }}{{ none is mapping }}{{ 5 is iterable }}", {}),
    # filters
    ("{{ '  a b  '|trim }}|{{ 'xxaxx'|trim('x') }}|{{ [1, 2, 3]|length }}|{{ 'héllo'|length }}|{{ {'a': 1}|count }}"
     "|{{ 'abc'|upper }}|{{ 'ABC'|lower }}|{{ 'hello WORLD'|capitalize }}|{{ 'hello world-foo bar2baz'|title }}", {}),
    ("{{ 'a-b-c'|replace('-', '+') }}|{{ 'a-b-c'|replace('-', '+', 1) }}|{{ 'ab'|replace('', '.') }}"
     "|{{ [1, 2]|join(', ') }}|{{ [{'a': 1}, {'a': 2}]|join(',', attribute='a') }}|{{ 'abc'|join('-') }}", {}),
    ("{{ x|default('d') }}|{{ ''|default('d') }}|{{ ''|default('d', true) }}|{{ none|default('d') }}|{{ x|d('z') }}"
     "|{{ 0|default('d', boolean=true) }}", {}),
    ("{{ {'a': [1, 2.5, none, true], 'b': 'é\"\\n\\u0001'}|tojson }}|{{ [1, {'x': 2}]|tojson(indent=2) }}"
     "|{{ []|tojson(indent=2) }}|{{ {'b': 1, 'a': 2}|tojson(sort_keys=true) }}|{{ 'é😀'|tojson(ensure_ascii=true) }}"
     "|{{ {'a': 1}|tojson(separators=[',', ':']) }}|{{ 3.0|tojson }}|{{ 'a'|tojson }}", {}),
    ("{{ [1, 2, 3]|first }}{{ [1, 2, 3]|last }}{{ 'abc'|first }}{{ 'abc'|last }}{{ 'abc'|list }}{% for k, v in {'a': 1}|items %}{{ k }}{{ v }}{% endfor %}"
     "{{ 'x'|safe }}{{ 12|string }}{{ '42'|int + 1 }}{{ 'x'|int }}{{ ' 7 '|int }}{{ '4.9'|int }}{{ 4.9|int }}"
     "{{ '3.5'|float }}{{ 'y'|float }}{{ -3|abs }}{{ -2.5|abs }}{{ []|first }}", {}),
    ("{{ ms|selectattr('r', 'equalto', 'a')|list }}|{{ ms|rejectattr('r', 'eq', 'a')|map(attribute='r')|list }}"
     "|{{ [1, 2, 3, 4]|select('even')|list }}|{{ ['a', 'code', 'b']|reject('equalto', 'code')|join(',') }}"
     "|{{ ['a', 'b']|map('upper')|list }}|{{ [0, 1, '', 'x']|select|list }}|{{ ms|selectattr('v')|list|length }}"
     "|{{ ms|map(attribute='w', default='-')|list }}|{{ [[1, 2], [3]]|map('length')|list }}",
     {"ms": [{"r": "a", "v": 1}, {"r": "b", "v": 0}]}),
    ("{{ [3, 1, 2]|sort }}|{{ [3, 1, 2]|sort(reverse=true) }}|{{ ['b', 'A', 'a']|sort }}"
     "|{{ ['b', 'A', 'a']|sort(case_sensitive=true) }}|{{ ms|sort(attribute='k')|map(attribute='k')|list }}"
     "|{{ [1, 2, 1]|unique|list }}|{{ ['a', 'A', 'b']|unique|list }}|{{ [1, 2, 3]|reverse|list }}|{{ 'abc'|reverse }}",
     {"ms": [{"k": 2}, {"k": 1}]}),
    ("[{{ 'a\nb\n\nc'|indent(2) }}][{{ 'a\nb'|indent(2, true) }}][{{ 'a\n\nb\n'|indent(1, blank=true) }}]"
     "[{{ 'a\nb'|indent('> ') }}]", {}),
    # methods
    ("{{ '  x '.strip() }}|{{ 'xxyxx'.strip('x') }}|{{ '  x '.lstrip() }}|{{ '  x '.rstrip() }}|{{ 'a b  c '.split() }}"
     "|{{ 'a,b,,c'.split(',') }}|{{ 'a,b,c'.split(',', 1) }}|{{ ' a b c'.split(none, 1) }}|{{ 'abc'.startswith('ab') }}"
     "|{{ 'abc'.endswith(('x', 'c')) }}|{{ 'ab'.upper() }}|{{ 'hi there'.title() }}|{{ 'aaa'.replace('a', 'b', 2) }}"
     "|{{ 'héllo'.find('l') }}|{{ 'abc'.find('z') }}|{{ ', '.join(['a', 'b']) }}|{{ 'Hi'.lower() }}|{{ 'hi'.capitalize() }}",
     {}),
    ("{% for k, v in {'a': 1}.items() %}{{ k }}{{ v }}{% endfor %}|{{ {'a': 1}.keys()|list }}|{{ {'a': 1}.values()|list }}|{{ {'a': 1}.get('a') }}"
     "|{{ {'a': 1}.get('b', 'no') }}|{{ {'a': 1}.get('b') }}|{{ d['items'] }}", {"d": {"items": 1}}),
    ("{{ '\\u3000 x\\u00a0\\n'.strip() }}|{{ ' \\u2003y'|trim }}|{{ 'ÀB'|length }}", {}),
    # globals
    ("{{ range(3)|list }}|{{ range(1, 7, 2)|list }}|{{ range(5, 0, -2)|list }}|{{ dict(a=1, b='x') }}"
     "|{% set ns = namespace(x=1) %}{{ ns.x }}|{{ range(0)|list }}", {}),
    ("{{ raise_exception('boom') }}", {}),
    ("{{ ['a b', 'c']|map('replace', ' ', '_')|list }}|{{ 'ff'|int(0, 16) }}|{{ 'x'|float(1.5) }}"
     "|{{ ms|unique(attribute='k')|list|length }}|{{ dict({'a': 1}, b=2) }}|{{ namespace({'a': 1}).a }}"
     "|{{ 1_000 }}|{{ '\\101\\U0001F600' }}|{{ 'a' ~ ('b' if false) }}|{{ 'a\\u3000b c'.split() }}",
     {"ms": [{"k": 1}, {"k": 1}, {"k": 2}]}),
    ("{# {% if %} is no tag here #}ok{#- trimmed -#}   !", {}),
    # loops
    ("{% for x in [1, 2, 3, 4] if x is even %}{{ loop.index }}/{{ loop.length }}:{{ x }}{{ ',' if not loop.last }}"
     "{% else %}none{% endfor %}", {}),
    ("{% for x in [] %}a{% else %}empty{% endfor %}|{% for x in y|default([]) %}{% endfor %}", {}),
    ("{% for x in [1, 2, 3] %}{% if x == 2 %}{% continue %}{% endif %}{{ x }}{% if x == 3 %}{% break %}{% endif %}"
     "{% endfor %}", {}),
    ("{% for x in [1, 2, 3] %}{{ loop.previtem }}-{{ loop.nextitem }}-{{ loop.revindex }}-{{ loop.revindex0 }}"
     "-{{ loop.index0 }}-{{ loop.first }}-{{ loop.cycle('a', 'b') }};{% endfor %}", {}),
    ("{% for a, b in [[1, 2], [3, 4]] %}{{ a }}{{ b }}{% endfor %}|{% for k, v in {'x': 1, 'y': 2}.items() %}"
     "{{ k }}={{ v }};{% endfor %}|{% for k in {'x': 1, 'y': 2} %}{{ k }}{% endfor %}|{% for c in 'hé' %}[{{ c }}]"
     "{% endfor %}", {}),
    ("{% for i in [1, 2] %}{% for j in 'ab' %}{{ i }}{{ j }}{{ loop.index }}{% endfor %}{{ loop.index }}{% endfor %}",
     {}),
    # scoping
    ("{% for i in [1, 2] %}{% if i == 2 %}[{{ x }}]{% endif %}{% set x = i %}{% endfor %}[{{ x }}]", {}),
    ("{% set x = 5 %}{% for i in [1, 2] %}[{{ x }}]{% set x = i %}{% endfor %}[{{ x }}]", {}),
    ("{% set ns = namespace(a=1, found=false) %}{% for i in [1, 2] %}{% set ns.a = ns.a + i %}"
     "{% if i == 2 %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.a }}{{ ns.found }}", {}),
    ("{% if true %}{% set y = 3 %}{% endif %}{{ y }}|{% set a, b = [1, 2] %}{{ a }}{{ b }}", {}),
    ("{% set messages = messages[1:] %}{{ messages|length }}", {"messages": [1, 2, 3]}),
    # macros and set blocks
    ("{% macro m(a, b='x') %}[{{ a }}{{ b }}{% set a = 9 %}{{ a }}]{% endmacro %}{{ m(1) }}{{ m(1, b=2) }}"
     "{{ m(b=3, a=4) }}{{ m() }}", {}),
    ("{% set x = 5 %}{% macro m() %}[{{ x }}|{{ i }}]{% endmacro %}{% set x = 6 %}{% for i in [1] %}{{ m() }}"
     "{% endfor %}", {}),
    ("{% macro render(c) %}{% if c is string %}{{ c }}{% else %}{% for p in c %}{{ p.text }}{% endfor %}{% endif %}"
     "{% endmacro %}{{ render('a') }}{{ render([{'text': 'b'}, {'text': 'c'}]) }}", {}),
    ("{% set x %}a{{ 1 }}b{% endset %}[{{ x }}]{{ x|length }}", {}),
    ("{% generation %}assistant text{% endgeneration %}", {}),
    # slicing and indexing
    ("{{ [1, 2, 3][1:] }}{{ [1, 2, 3][:-1] }}{{ [1, 2, 3][::2] }}{{ [1, 2, 3][-1] }}{{ 'hello'[-3:] }}"
     "{{ 'héllo'[1] }}{{ 'héllo'[1:3] }}{{ 'abc'[::-1] }}{{ [1, 2, 3][5:] }}{{ 'abc'[10] }}{{ [1, 2, 3][-5:2] }}"
     "{{ x.0 }}{{ [1, 2, 3][3:0:-1] }}", {"x": ["z"]}),
    # Undefined
    ("{{ x|length }}{{ x|trim }}{{ x is none }}{{ x == x }}{% for a in x %}1{% endfor %}{{ x|list }}{{ 'a' ~ x }}", {}),
    ("{{ m.tool_calls is defined }}|{{ 'tool_calls' in m }}|{% if m.tool_calls %}yes{% else %}no{% endif %}"
     "|{{ m.content.content is defined }}", {"m": {"role": "user", "content": "hi"}}),
    # errors (the C++ interpreter must fail too)
    ("{{ x.y }}", {}),
    ("{{ 'a' + x }}", {}),
    ("{{ 1 / 0 }}", {}),
    ("{{ 'ab' < 1 }}", {}),
    ("{{ [1][5].a }}", {}),
    ("{% set x = 1 %}{% set x.a = 2 %}", {}),
    ("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}", {}),
    ("{{ 1 + }}", {}),
    ("{{ 'a' ~ 1 + 2 }}", {}),
    ("{% if true %}no end", {}),
    ("{% for x in [1] %}{% endif %}", {}),
    ("{{ x|nosuchfilter }}", {}),
    ("{{ 'a' * 2.0 }}", {}),
    ("{{ 'a'.split('') }}", {}),
    ("{{ x|int }}", {}),
    ("{% set n = 1 %}{{ n[1:] }}", {}),
    ("{{ 2.5 ** 1e3 }}", {}),
    ("{% break %}", {}),
    ("{{ {'a': 1}|tojson(indent=x.y) }}", {}),
    ("{% for a, b in [[1, 2, 3]] %}{% endfor %}", {}),
]


def main():
    with open(os.path.join(HERE, "expected.json"), "w", encoding="utf-8") as f:
        json.dump({"generator": f"jinja2 {jinja2.__version__} configured as transformers configures it",
                   "conversations": CONVERSATIONS, "templates": template_cases()}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    snippets = [{"template": t, "variables": v, **render(t, v)} for t, v in SNIPPETS]
    with open(os.path.join(HERE, "snippets.json"), "w", encoding="utf-8") as f:
        json.dump(snippets, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
