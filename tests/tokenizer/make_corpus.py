#!/usr/bin/env python3
"""Writes tests/tokenizer/corpus.json: the strings the tokenizers are checked on
against Hugging Face `tokenizers` (python/tests/test_tokenizers.py).

Deterministic: a hand-written list covering the cases that break tokenizers
(contractions, whitespace runs, digits, accents, CJK, emoji, code, special-token
text, control characters, over-long words) plus seeded random combinations of
fragments and random code points. Regenerate with

    python3 tests/tokenizer/make_corpus.py > tests/tokenizer/corpus.json
"""

import json
import random
import sys
import unicodedata

HAND = [
    # ASCII prose, contractions (GPT-2 matches 's 't 're 've 'm 'll 'd case-sensitively,
    # Llama-3 case-insensitively)
    "Hello world",
    "Hello, world! How are you today?",
    "The quick brown fox jumps over the lazy dog.",
    "I'm sure they'll say it's fine, don't you think? We've seen it.",
    "you're, she's, it'd, we'll, they've, I'm, can't, won't",
    "I'M SURE THEY'LL SAY IT'S FINE, DON'T YOU THINK? WE'VE SEEN IT.",
    "'s 't 're 've 'm 'll 'd",
    "'S 'T 'RE 'VE 'M 'LL 'D",
    "'sup 'tis 'twas 'ello",
    "rock'n'roll o'clock y'all",
    "''quoted'' and 'single' and \"double\"",
    "'ſ 'ſt",
    "a'b'c'd",
    "' s",
    "'",
    "''",
    # whitespace
    "",
    " ",
    "  ",
    "   ",
    "\t",
    "\n",
    "\n\n",
    "\r\n",
    "\r\n\r\n",
    "a b",
    "a  b",
    "a   b",
    "a    b",
    "a\tb",
    "a\t\tb",
    "a\nb",
    "a\n\nb",
    "a \n b",
    "a \n\n b",
    "a\n \nb",
    "  leading spaces",
    "trailing spaces  ",
    "  both  ",
    "\t\t\tindented with tabs",
    "line one\nline two\n\nline four\n",
    "windows\r\nline\r\nendings\r\n",
    "mixed \t \n \r\n whitespace \t",
    "x\u00a0y non-breaking\u00a0space",
    "ideographic\u3000space",
    "line\u2028separator\u2029paragraph",
    "vertical\x0btab and form\x0cfeed",
    "next\x85line",
    "en\u2002em\u2003thin\u2009hair\u200a",
    " \u00a0 \u00a0",
    "\n\n\n\n\n\n\n\n\n\n",
    " " * 24,
    "\t" * 8,
    "word\n\n\n   word",
    "end with newline\n",
    "   \n",
    # numbers
    "0",
    "7",
    "42",
    "123",
    "1234",
    "12345678901234567890",
    "3.14159265358979323846",
    "1,000,000 and 1.000.000",
    "-273.15°C",
    "0x1F 0b1010 0o777 1e-10 6.022e23",
    "2024-01-31T12:34:56Z",
    "+1 (555) 123-4567",
    "version 1.2.3-beta.4",
    "a1b2c3d4",
    "abc123def456",
    "١٢٣٤٥ Arabic-Indic digits",
    "०१२३ Devanagari digits",
    "²³ superscripts, ½ ¾ fractions, Ⅻ roman",
    "９８７ fullwidth digits",
    "$100.00, €50, £20, ¥1000",
    "50% off!!!",
    # Latin accents (BERT strips them after NFD)
    "Café naïve résumé façade Ångström",
    "e\u0301 combining acute, a\u0308 combining diaeresis",
    "Crème Brûlée à la française",
    "ÀÉÎÕÜ àéîõü ÇçÑñ",
    "Ñandú, pingüino, acción",
    "Straße Größe Maß",
    "İstanbul ıi",
    "Ǆ ǅ ǆ digraphs",
    "ﬁnance ﬂow ligatures",
    "Æsir Œuvre Øre",
    "Tiếng Việt có dấu",
    "Łódź Kraków Gdańsk",
    "Dvořák Škoda",
    # other scripts
    "ΣΊΣΥΦΟΣ και Οδυσσέας",
    "Привет, мир! Как дела?",
    "Україна Київ",
    "مرحبا بالعالم",
    "שלום עולם",
    "हिन्दी भाषा",
    "ภาษาไทย",
    "ქართული",
    "Հայերեն",
    "한국어 텍스트입니다",
    "日本語のテキストとカタカナ ー",
    "中文测试，你好！世界。",
    "混合English和中文text",
    "ｆｕｌｌｗｉｄｔｈ ＡＢＣ",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕞𝕒𝕥𝕙",
    "𠀀𠀁 CJK extension B",
    # emoji and symbols
    "😀",
    "👍🏽",
    "🇺🇸🇫🇷",
    "👨\u200d👩\u200d👧\u200d👦 family",
    "❤️ heart",
    "emoji😀in😀text",
    "I ❤ NY ☃ ★ ♠",
    "→ ← ↑ ↓ ⇒ ∀ ∃ ∑ ∫ √ ∞ ≠ ≤ ≥",
    "©®™ § ¶ † ‡ • …",
    "«guillemets» „quotes“ ‘single’ “double”",
    "— – ‐ hyphens and dashes",
    # code
    "def foo(x):\n    return x ** 2\n",
    "for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}",
    "#include <iostream>\nint main() { std::cout << \"hi\\n\"; }",
    "if x == 1 and y != 2: pass",
    "const f = (a, b) => a + b;",
    "SELECT * FROM users WHERE id = 42;",
    "{\"key\": [1, 2, 3], \"nested\": {\"a\": null}}",
    "<div class=\"main\"><p>Hello</p></div>",
    "https://example.com/path?query=1&other=two#frag",
    "user@example.com",
    "git commit -m 'fix: bug' && git push origin main",
    "foo_bar_baz camelCaseIdentifier SCREAMING_CASE",
    "x+=1;y-=2;z*=3;w/=4",
    "a->b a::b a.b a?.b a!!",
    "/^[a-z0-9_-]{3,16}$/",
    "    indented code\n        more indented\n",
    "```python\nprint('hi')\n```",
    "$ ls -la | grep '\\.txt$'",
    "// comment\n/* block */",
    "#!/usr/bin/env bash\nset -euo pipefail\n",
    # special-token text
    "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n",
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|><|im_end|>",
    "a<|endoftext|>b",
    " <|im_start|> spaced ",
    "<|im_start|",
    "<|im_start|>system\nYou are helpful.<|im_end|>",
    "<|endoftext|><|endoftext|><|endoftext|>",
    "<|fake_token|> <|im_end",
    "<repo_name>luminal<file_sep>main.cpp",
    "[CLS] hello [SEP] world [SEP]",
    "[MASK] is a [MASK]",
    "[cls] lowercase is not special",
    "[UNK][PAD]",
    "[CLS]",
    # control and invisible characters
    "\x00null",
    "bell\x07 escape\x1b[0m",
    "zero\u200bwidth space",
    "\ufeffBOM at start",
    "replacement \ufffd char",
    "soft\u00adhyphen",
    "ZWJ\u200dand ZWNJ\u200c",
    "rtl \u202eoverride\u202c",
    "\x7fdelete",
    # long words and repetitions
    "a" * 150,
    "supercalifragilisticexpialidocious" * 4,
    "pneumonoultramicroscopicsilicovolcanoconiosis",
    "!!!!!!!!!!!!!!!!",
    "......",
    "----------------------------------------",
    "================",
    "????!!!!",
    "aaaaaaaaaaaaaaaaaaaaaaaa",
    "abababababababababababab",
    "ha" * 40,
    "日本" * 30,
    "😀" * 12,
    "1" * 64,
    "x" * 101,
    "é" * 101,
]

WORDS = ["the", "The", "of", "and", "token", "tokenizer", "luminal", "compiler", "kernel",
         "Hello", "WORLD", "naïve", "Café", "über", "日本", "中文", "한국", "привет", "مرحبا",
         "don't", "it's", "they're", "I'll", "we've", "I'm", "he'd", "x", "y2", "foo_bar",
         "camelCase", "HTTP", "GPU", "f(x)", "a[i]", "->", "::", "!=", "==", "&&", "||",
         "#", "@", "$", "%", "^", "&", "*", "(", ")", "[", "]", "{", "}", ";", ":", ",",
         ".", "?", "!", "'", "\"", "`", "~", "<", ">", "/", "\\", "|", "-", "_", "+", "="]
NUMBERS = ["0", "1", "42", "100", "2024", "3.14", "1e9", "007", "65536", "123456789",
           "99999999999999", "١٢", "½"]
SPACES = [" ", " ", " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n", "\n ", "\u00a0", "\u3000"]
EMOJI = ["😀", "🚀", "👍🏽", "🇯🇵", "❤️", "🎉", "🤖", "✨", "🔥", "👩\u200d💻"]
SPECIALS = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "[CLS]", "[SEP]", "[MASK]",
            "[UNK]", "[PAD]", "<|im_start", "im_end|>"]
# Blocks random code points are drawn from (assigned long before Unicode 14, so
# their categories agree across the Unicode versions of Python, Rust and Oniguruma).
BLOCKS = [(0x00A0, 0x00FF), (0x0100, 0x017F), (0x0180, 0x024F), (0x0300, 0x036F),
          (0x0370, 0x03FF), (0x0400, 0x04FF), (0x0530, 0x058F), (0x0590, 0x05FF),
          (0x0600, 0x06FF), (0x0900, 0x097F), (0x0E00, 0x0E7F), (0x1100, 0x11FF),
          (0x2000, 0x206F), (0x2070, 0x209F), (0x20A0, 0x20BF), (0x2100, 0x214F),
          (0x2190, 0x21FF), (0x2200, 0x22FF), (0x2500, 0x257F), (0x3000, 0x303F),
          (0x3040, 0x309F), (0x30A0, 0x30FF), (0x4E00, 0x9FA5), (0xAC00, 0xD7A3),
          (0xFF00, 0xFFEF), (0x1F300, 0x1F5FF), (0x1F600, 0x1F64F)]


def random_codepoints(rng, n):
    out = []
    while len(out) < n:
        lo, hi = rng.choice(BLOCKS)
        c = chr(rng.randint(lo, hi))
        if unicodedata.category(c) not in ("Cn", "Cs", "Co"):
            out.append(c)
    return "".join(out)


def random_string(rng):
    kind = rng.random()
    if kind < 0.12:
        return random_codepoints(rng, rng.randint(1, 12))
    parts = []
    for _ in range(rng.randint(2, 12)):
        r = rng.random()
        if r < 0.45:
            parts.append(rng.choice(WORDS))
        elif r < 0.60:
            parts.append(rng.choice(NUMBERS))
        elif r < 0.72:
            parts.append(rng.choice(EMOJI))
        elif r < 0.80:
            parts.append(rng.choice(SPECIALS))
        elif r < 0.90:
            parts.append(random_codepoints(rng, rng.randint(1, 4)))
        else:
            parts.append(rng.choice(HAND[:60]))
        parts.append(rng.choice(SPACES) if rng.random() < 0.75 else "")
    return "".join(parts)


def main():
    rng = random.Random(20240607)
    strings = list(HAND)
    seen = set(strings)
    while len(strings) < len(HAND) + 260:
        s = random_string(rng)
        if s not in seen:
            seen.add(s)
            strings.append(s)
    json.dump({"generator": "tests/tokenizer/make_corpus.py", "seed": 20240607,
               "strings": strings}, sys.stdout, ensure_ascii=True, indent=0)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
