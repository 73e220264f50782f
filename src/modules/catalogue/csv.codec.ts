import type { CheeseView } from './cheese.schema.js';

/** What a spreadsheet may take for the start of a formula: = + - @ (full-width too, or after spaces), or a leading tab, CR or LF. */
const FORMULA_START = /^(?:[\t\r\n]|\s*[=+\-@＝＋－＠])/;

/** A cell as a spreadsheet should read it: lists joined with ";", objects as JSON. */
function cell(value: unknown): string {
  let text: string;
  if (value === null || value === undefined) text = '';
  else if (Array.isArray(value)) text = value.map((v) => (typeof v === 'object' && v !== null && 'name' in v ? String(v.name) : String(v))).join(';');
  else if (typeof value === 'object') text = 'name' in value ? String((value as { name: unknown }).name) : JSON.stringify(value);
  else text = String(value);
  // A leading = + - @ (or tab, CR) makes spreadsheets evaluate the cell (CSV injection); a quote
  // disarms it. Every text cell, whatever made it (a list, a category's name, JSON); numbers
  // and booleans are values, not text, and stay as they are.
  if (typeof value !== 'number' && typeof value !== 'boolean' && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n;]/.test(text) || text !== text.trim() ? `"${text.replaceAll('"', '""')}"` : text;
}

/** RFC 4180 CSV with a header row, CRLF line ends. */
export function toCsv(items: Partial<CheeseView>[], columns: (keyof CheeseView)[]): string {
  const lines = [columns.join(',')];
  for (const item of items) lines.push(columns.map((c) => cell(item[c])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
