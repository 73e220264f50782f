/**
 * At least one character that shows: not white space, a control, a format character (U+200B,
 * U+2060, U+FEFF …), a separator, a lone combining mark, a Hangul filler or the blank Braille
 * pattern U+2800 (a symbol drawn as nothing). The fillers U+115F, U+1160, U+3164 and U+FFA0
 * are the only assigned default-ignorable code points (what Unicode says renders as nothing)
 * that are letters; every other assigned one is a format character or a mark, so all of them
 * are covered. They are spelled out rather than `\p{Default_Ignorable_Code_Point}`: OpenAPI tools
 * that read the pattern without the `u` flag would misjudge our own examples. A name of only
 * such characters looks empty to every reader, so human-facing text must match this (checked
 * with the `u` flag). Private-use and unassigned code points count as visible: fonts draw
 * them (as a glyph or a box).
 */
export const VISIBLE_TEXT_PATTERN = '[^\\p{White_Space}\\p{Cc}\\p{Cf}\\p{Z}\\p{M}\\u115F\\u1160\\u3164\\uFFA0\\u2800]';
const visible = new RegExp(VISIBLE_TEXT_PATTERN, 'u');

export function hasVisibleText(text: string): boolean {
  return visible.test(text);
}

export const VISIBLE_TEXT_MESSAGE = 'must contain a visible character';

/**
 * Scripts whose combining marks are accents or optional vowel points (é, ё, ά, hamza, niqqud),
 * dropped so "Epoisses" finds "Époisses". Elsewhere a mark is part of the letter (ダ is not タ,
 * की is not क), so it stays.
 */
const FOLDED_MARKS_BASE = /[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{Script=Hebrew}\p{Script=Arabic}]/u;

/** Letters NFKD leaves whole but readers take for a base letter, and full case folds toLowerCase() lacks. */
const LETTER_FOLDS: Record<string, string> = { ß: 'ss', ς: 'σ', ı: 'i', ø: 'o', đ: 'd', ł: 'l', ħ: 'h', ŧ: 't', æ: 'ae', œ: 'oe' };
const LETTER_FOLD = new RegExp(`[${Object.keys(LETTER_FOLDS).join('')}]`, 'g');

/** A word: letters and digits of any script, with the marks that belong to them. */
const WORD = /[\p{L}\p{N}][\p{L}\p{N}\p{M}]*/gu;

/**
 * The searchable words of a text, folded the same way in the index and in a query: format
 * characters removed (a soft hyphen never splits a word), NFKD, lower case, the letter folds
 * above, diacritics dropped where they are accents, then recomposed (NFC). Punctuation,
 * symbols and emoji separate words and are not searchable. Stored values depend on this: a
 * change needs a migration that recomputes them (as 0003_search_tokens does).
 */
export function searchTerms(text: string): string[] {
  const folded = text
    .replace(/\p{Cf}+/gu, '')
    .normalize('NFKD')
    .toLowerCase()
    .replace(LETTER_FOLD, (c) => LETTER_FOLDS[c]!)
    .replace(/(\p{L}?)(\p{M}+)/gu, (_, base: string, marks: string) => (base && !FOLDED_MARKS_BASE.test(base) ? base + marks : base))
    .normalize('NFC');
  return folded.match(WORD) ?? [];
}

/** The folded words, space-separated: what `search_text` and `sort_name` store. */
export function foldForSearch(text: string): string {
  return searchTerms(text).join(' ');
}
