/**
 * Checks every relative link of the repository's Markdown (README.md, docs/, packages/*\/README.md):
 * the file it names exists and, when it names a heading (`#anchor`), the target has that
 * heading (GitHub's slugs). Exits 1 naming each broken link. Run in CI beside the generators.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '..');

function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return walk(full);
      return entry.name.endsWith('.md') ? [full] : [];
    });
  const packages = fs.readdirSync(path.join(ROOT, 'packages')).map((name) => path.join(ROOT, 'packages', name, 'README.md'));
  return [path.join(ROOT, 'README.md'), ...walk(path.join(ROOT, 'docs')), ...packages].filter((file) => fs.existsSync(file));
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2. */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading] of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = heading!
      .replace(/<[^>]+>/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** `[text](target)` links outside code, relative ones only (no scheme, no `//`). */
export function relativeLinksOf(markdown: string): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  const lines = markdown.split('\n');
  let fenced = false;
  lines.forEach((line, index) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) return;
    for (const [, target] of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (!/^[a-z][a-z0-9+.-]*:|^\/\//i.test(target!)) links.push({ target: target!, line: index + 1 });
    }
  });
  return links;
}

export function brokenLinks(files: readonly string[]): string[] {
  const broken: string[] = [];
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    for (const { target, line } of relativeLinksOf(text)) {
      const [pathPart, anchor] = target.split('#') as [string, string | undefined];
      const resolved = pathPart === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(pathPart));
      const where = `${path.relative(ROOT, file)}:${line}: ${target}`;
      if (!fs.existsSync(resolved)) broken.push(`${where} (no such file)`);
      else if (anchor && resolved.endsWith('.md') && !anchorsOf(fs.readFileSync(resolved, 'utf8')).has(anchor)) broken.push(`${where} (no such heading)`);
    }
  }
  return broken;
}

if (import.meta.url === pathToFileURL(path.resolve(process.argv[1] ?? '')).href) {
  const files = markdownFiles();
  const broken = brokenLinks(files);
  if (broken.length > 0) {
    console.error(`broken links in the Markdown:\n${broken.join('\n')}`);
    process.exit(1);
  }
  console.log(`${files.length} Markdown files: every relative link resolves`);
}
