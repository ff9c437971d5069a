import { join } from 'node:path'

/** bench/RESULTS.md. */
export const RESULTS = join(import.meta.dir, 'RESULTS.md')

/** The line in RESULTS.md after which hand-written notes begin; the benchmarks keep them. */
const NOTES_MARKER = '<!-- Everything below this line is kept when `bun run bench` rewrites this file. -->'

/** The generated sections of RESULTS.md, in order. */
const SECTIONS = ['compare', 'scale'] as const

/** A generated section of RESULTS.md. */
export type Section = (typeof SECTIONS)[number]

const HEADER = `# Benchmark results

\`bun run bench\` (about 8 minutes) writes both sections below: the ceiling, rock-legends and json-server side by side, then rock-legends from 100 to 100,000 artists. \`bun bench/run.ts compare\` and \`bun run bench:scale\` run one of them, replacing only its own section. They need wrk (and Node.js for json-server), and run the compiled \`dist/rock-legends\`, building it first when it is older than its sources. All traffic is on 127.0.0.1.`

const begin = (section: Section) => `<!-- ${section}:begin -->`
const end = (section: Section) => `<!-- ${section}:end -->`

/** The section as found in `text`, markers included, or undefined. */
function existing(text: string, section: Section): string | undefined {
  const from = text.indexOf(begin(section))
  const to = text.indexOf(end(section))
  return from >= 0 && to > from ? text.slice(from, to + end(section).length) : undefined
}

/**
 * Rewrites RESULTS.md with `markdown` as `section`, keeping the other generated section as it was and everything
 * from {@link NOTES_MARKER} on.
 */
export async function writeSection(section: Section, markdown: string): Promise<void> {
  const file = Bun.file(RESULTS)
  const previous = (await file.exists()) ? await file.text() : ''
  const notesAt = previous.indexOf(NOTES_MARKER)
  const generated = notesAt < 0 ? previous : previous.slice(0, notesAt)
  const notes = notesAt < 0 ? `${NOTES_MARKER}\n` : previous.slice(notesAt)
  const sections = SECTIONS.map((each) =>
    each === section
      ? `${begin(each)}\n${markdown.trim()}\n${end(each)}`
      : (existing(generated, each) ?? `${begin(each)}\nNot measured yet.\n${end(each)}`),
  )
  await Bun.write(RESULTS, `${HEADER}\n\n${sections.join('\n\n')}\n\n${notes}`)
}

/**
 * Writes a section of its own below the notes of RESULTS.md, between `<!-- name:begin -->` and `<!-- name:end -->`:
 * in place of the same section, or at the end the first time. `markdown` is the section without its markers.
 */
export async function writeNamedSection(name: string, markdown: string): Promise<void> {
  const [begin, end] = [`<!-- ${name}:begin -->`, `<!-- ${name}:end -->`]
  const section = `${begin}\n${markdown.trim()}\n${end}`
  const text = await Bun.file(RESULTS).text()
  const from = text.indexOf(begin)
  const to = text.indexOf(end)
  await Bun.write(
    RESULTS,
    from >= 0 && to > from
      ? `${text.slice(0, from)}${section}${text.slice(to + end.length)}`
      : `${text.trimEnd()}\n\n${section}\n`,
  )
}
