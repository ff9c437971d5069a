import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

// What the README tests read in the project's Markdown: the pages, their shell blocks with the walkthrough's markers,
// their headings' anchors (GitHub's rules) and their links. Fenced code is never read as headings or links.

export const ROOT = resolve(import.meta.dir, '../..')

/** The README and every page of docs/, as paths from the repository's root: the pages the walkthrough runs. */
export function documentationPages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`)
  return ['README.md', ...docs]
}

/** A page's text, from its path from the repository's root. */
export const readPage = (path: string) => readFileSync(join(ROOT, path), 'utf8')

const SHELLS = new Set(['sh', 'bash', 'shell'])
const BLOCK_MARKERS = new Set(['illustrative', 'background'])

/** A shell block of a page, with the walkthrough's marker of the line before it. */
export interface Block {
  page: string
  /** The line of the opening fence, 1-based. */
  line: number
  marker: 'run' | 'illustrative' | 'background'
  text: string
}

/** A page as the walkthrough reads it: its shell blocks, and the page whose blocks run before its own, if any. */
export interface WalkthroughPage {
  path: string
  /** From `<!-- walkthrough: after PAGE -->`: the page (a path from the root) whose session this page continues. */
  after: string | undefined
  blocks: Block[]
}

/**
 * Reads a page's shell blocks and markers. An HTML comment, invisible on GitHub, marks a block on the line just
 * before its fence (`<!-- walkthrough: illustrative -->`, `<!-- walkthrough: background -->`) or the whole page
 * (`<!-- walkthrough: after README.md -->`, at most once). Throws on an unknown marker, a block marker that is not
 * just before a shell fence, or an unclosed fence, so a marker cannot drift away from what it marks.
 */
export function walkthroughPage(path: string, text: string): WalkthroughPage {
  const lines = text.split('\n')
  const blocks: Block[] = []
  let after: string | undefined
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string
    const marker = /^<!--\s*walkthrough:\s*(.*?)\s*-->$/.exec(line.trim())?.[1]
    if (marker !== undefined) {
      const page = /^after\s+(\S+)$/.exec(marker)?.[1]
      if (page !== undefined) {
        if (after !== undefined) throw new Error(`${path}:${i + 1}: a page may continue one other page only`)
        after = page
        continue
      }
      if (!BLOCK_MARKERS.has(marker)) throw new Error(`${path}:${i + 1}: unknown marker ${marker}`)
      if (!SHELLS.has(/^```(\w*)/.exec(lines[i + 1] ?? '')?.[1] ?? ''))
        throw new Error(`${path}:${i + 1}: a walkthrough marker must be just before a shell fence`)
      continue
    }
    const fence = /^```(\w*)/.exec(line)
    if (!fence) continue
    const end = lines.indexOf('```', i + 1)
    if (end < 0) throw new Error(`${path}:${i + 1}: unclosed fence`)
    if (SHELLS.has(fence[1] as string)) {
      const previous = /^<!--\s*walkthrough:\s*(illustrative|background)\s*-->$/.exec(lines[i - 1]?.trim() ?? '')?.[1]
      blocks.push({
        page: path,
        line: i + 1,
        marker: (previous ?? 'run') as Block['marker'],
        text: lines.slice(i + 1, end).join('\n'),
      })
    }
    i = end
  }
  return { path, after, blocks }
}

/** The lines of a page outside fenced code, each with its 1-based line number. */
export function proseLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = []
  let fence: string | undefined
  text.split('\n').forEach((line, i) => {
    const opening = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence !== undefined) {
      if (opening !== undefined && opening[0] === fence[0] && opening.length >= fence.length && line.trim() === opening)
        fence = undefined
      return
    }
    if (opening) {
      fence = opening
      return
    }
    out.push({ line: i + 1, text: line })
  })
  return out
}

/**
 * A heading's anchor as GitHub makes it (github-slugger): the text as shown (inline code keeps its text, links their
 * label), lower-cased, every character that is not a letter, mark, number, connector, hyphen or space removed, and
 * each space made a hyphen.
 */
export function slug(heading: string): string {
  const shown = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/<[^>]+>/g, '')
  return shown
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-')
}

/** Every anchor a page offers: its headings' slugs (a repeated one gets -1, -2… as on GitHub) and HTML ids. */
export function anchors(text: string): Set<string> {
  const found = new Set<string>()
  const seen = new Map<string, number>()
  for (const { text: line } of proseLines(text)) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1]
    if (heading !== undefined) {
      const base = slug(heading)
      const count = seen.get(base) ?? 0
      seen.set(base, count + 1)
      found.add(count === 0 ? base : `${base}-${count}`)
    }
    for (const match of line.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) found.add(match[1] as string)
  }
  return found
}

/** A link of a page: its target as written, and the line it is on. */
export interface Link {
  line: number
  target: string
}

/** Every link and image of a page outside code: inline `[text](target)`, and reference definitions `[ref]: target`. */
export function links(text: string): Link[] {
  const found: Link[] = []
  for (const { line, text: raw } of proseLines(text)) {
    const prose = raw.replace(/(`+)[^`]*?\1/g, '')
    for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      found.push({ line, target: match[1] as string })
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(prose)?.[1]
    if (definition !== undefined) found.push({ line, target: definition })
  }
  return found
}
