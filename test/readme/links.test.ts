import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { anchors, documentationPages, links, proseLines, ROOT, readPage, slug } from './markdown.ts'

// Every relative link of the project's Markdown resolves: between the README, docs/, SECURITY.md and bench/, and to the
// files and folders they point at. A link's file must exist inside the repository, and its #anchor must be a heading
// (by GitHub's rules) or an HTML id of the page it names. Links to other sites are not fetched (the tests never leave
// the machine); links inside code are not links.

/** The pages whose links are checked: the README, docs/, SECURITY.md, bench/'s notes, the npm package's README. */
function checkedPages(): string[] {
  const bench = readdirSync(join(ROOT, 'bench'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `bench/${name}`)
  return [...documentationPages(), 'SECURITY.md', ...bench, 'npm/rock-legends/README.md']
}

/**
 * The broken links of one page, as `page:line: target (why)`. `read` gives another page's text by its path from the
 * root (`undefined` for a folder), `exists` whether a file or folder is there.
 */
function brokenLinks(
  page: string,
  text: string,
  read: (path: string) => string | undefined,
  exists: (path: string) => boolean,
): string[] {
  const broken: string[] = []
  for (const { line, target } of links(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue
    const hash = target.indexOf('#')
    const file = hash < 0 ? target : target.slice(0, hash)
    const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1))
    const path = file === '' ? page : normalize(join(dirname(page), decodeURIComponent(file))).replace(/\/$/, '')
    const where = `${page}:${line}: ${target}`
    if (path.startsWith('..') || path.startsWith('/')) {
      broken.push(`${where} (outside the repository)`)
      continue
    }
    if (!exists(path)) {
      broken.push(`${where} (no such file: ${path})`)
      continue
    }
    if (anchor === undefined) continue
    const targetText = path === page ? text : path.endsWith('.md') ? read(path) : undefined
    if (targetText === undefined) broken.push(`${where} (an anchor into ${path}, which is not a Markdown page)`)
    else if (!anchors(targetText).has(anchor)) broken.push(`${where} (${path} has no heading #${anchor})`)
  }
  return broken
}

/**
 * The repository paths a page names in inline code (`test/web/pages.test.ts`, `bun bench/search.ts`): words of a code
 * span that start with one of the repository's folders. Placeholders (`<platform>`, `*`, `…`, `{id}`, `$VAR`) and
 * the benchmarks' work folder, which a run creates, are not paths to check.
 */
function repositoryPaths(text: string): { line: number; path: string }[] {
  const found: { line: number; path: string }[] = []
  for (const { line, text: prose } of proseLines(text))
    for (const span of prose.matchAll(/(`+)([^`]+?)\1/g))
      for (const word of (span[2] as string).split(/\s+/)) {
        const path = /^(?:src|test|bench|npm|scripts|data|docs)\/[^\s:,;()#]*/.exec(word)?.[0]
        if (path && !/[<>*…{}$]|\/\.work\b/.test(path)) found.push({ line, path })
      }
  return found
}

const onDisk = {
  read: (path: string) =>
    existsSync(join(ROOT, path)) && statSync(join(ROOT, path)).isFile() ? readPage(path) : undefined,
  exists: (path: string) => existsSync(join(ROOT, path)),
}

describe('links', () => {
  const pages = checkedPages()

  test.each(pages)('every relative link of %s resolves, #anchors included', (page) => {
    expect(brokenLinks(page, readPage(page), onDisk.read, onDisk.exists)).toEqual([])
  })

  test('the README links to every page of docs/, and every page of docs/ links back', () => {
    const readme = links(readPage('README.md')).map(({ target }) => target.split('#')[0])
    const docs = documentationPages().filter((page) => page !== 'README.md')
    expect(docs.length).toBeGreaterThanOrEqual(5)
    expect(docs.filter((page) => !readme.includes(page))).toEqual([])
    const withoutWayBack = docs.filter(
      (page) =>
        !links(readPage(page)).some(
          ({ target }) => relative(ROOT, join(ROOT, dirname(page), target.split('#')[0] ?? '')) === 'README.md',
        ),
    )
    expect(withoutWayBack).toEqual([])
  })

  test.each(pages)('every path of the repository that %s names in code is there', (page) => {
    const missing = repositoryPaths(readPage(page))
      .filter(({ path }) => !existsSync(join(ROOT, path)))
      .map(({ line, path }) => `${page}:${line}: ${path}`)
    expect(missing).toEqual([])
  })

  test('the pages checked are the ones that link to each other', () => {
    expect(pages).toContain('README.md')
    expect(pages).toContain('SECURITY.md')
    expect(pages).toContain('bench/RESULTS.md')
    expect(pages).toContain('docs/api.md')
    expect(pages).toContain('docs/design-decisions.md')
  })
})

describe('the link checker', () => {
  const files: Record<string, string> = {
    'README.md': '# Rock Legends\n\n## Quick start\n\n## Quick start\n\n## From Node: `npm install rock-legends`\n',
    'docs/api.md': '# The API and accounts\n\n### Managing accounts (operators)\n\n<a id="custom"></a>\n',
    'SECURITY.md': '# Security\n\n## Who may write\n',
  }
  const folders = new Set(['docs', 'npm/recipes'])
  const read = (path: string) => files[path]
  const exists = (path: string) => path in files || folders.has(path)
  const check = (page: string, text: string) => brokenLinks(page, text, read, exists)

  test("makes anchors by GitHub's rules", () => {
    expect(slug('Managing accounts (operators)')).toBe('managing-accounts-operators')
    expect(slug('From Node: `npm install rock-legends`')).toBe('from-node-npm-install-rock-legends')
    expect(slug('How data is stored and kept safe')).toBe('how-data-is-stored-and-kept-safe')
    expect(slug('In-process, from Bun and TypeScript (the repository)')).toBe(
      'in-process-from-bun-and-typescript-the-repository',
    )
    expect(slug('Serú Girán & [friends](x.md)')).toBe('serú-girán--friends')
    expect([...anchors(files['README.md'] as string)]).toEqual([
      'rock-legends',
      'quick-start',
      'quick-start-1',
      'from-node-npm-install-rock-legends',
    ])
  })

  test('reads the paths a page names in code, and leaves placeholders and fenced code alone', () => {
    const text = [
      'Run `bun bench/search.ts` (see `test/web/pages.test.ts:12`), not `@rock-legends/<platform>` or `npm/recipes/*/x`',
      '```sh',
      'cat `src/in-a-fence.ts`',
      '```',
      '`bench/.work/startup` `docs/api.md#the-api` `src/`',
    ].join('\n')
    expect(repositoryPaths(text)).toEqual([
      { line: 1, path: 'bench/search.ts' },
      { line: 1, path: 'test/web/pages.test.ts' },
      { line: 5, path: 'docs/api.md' },
      { line: 5, path: 'src/' },
    ])
  })

  test('accepts links that resolve', () => {
    const text = [
      '# Rock Legends',
      '## Quick start',
      '## Quick start',
      '[a](#quick-start) [b](#quick-start-1) [c](docs/api.md#managing-accounts-operators) [d](docs/api.md#custom)',
      '[e](SECURITY.md#who-may-write) [f](npm/recipes) [g](https://example.com/#nothing) [h](docs/)',
      '![i](docs/api.md) `[not a link](nowhere.md)`',
      '```md',
      '[in code](nowhere.md#nothing)',
      '# not a heading',
      '```',
      '[ref]: SECURITY.md',
    ].join('\n')
    expect(check('README.md', text)).toEqual([])
    expect(
      check('docs/api.md', '# The API and accounts\n[up](../README.md#rock-legends) [here](#the-api-and-accounts)'),
    ).toEqual([])
  })

  test('finds a missing file, a missing anchor, an anchor into a folder, and a way out of the repository', () => {
    const text = [
      '[a](docs/gone.md)',
      '[b](#nowhere)',
      '[c](docs/api.md#managing-accounts)',
      '[d](npm/recipes#x)',
      '[e](../outside.md)',
      '[f]: SECURITY.md#who-may-read',
      '```sh',
      '# not a heading',
      '```',
      '[g](#not-a-heading)',
    ].join('\n')
    expect(check('README.md', text)).toEqual([
      'README.md:1: docs/gone.md (no such file: docs/gone.md)',
      'README.md:2: #nowhere (README.md has no heading #nowhere)',
      'README.md:3: docs/api.md#managing-accounts (docs/api.md has no heading #managing-accounts)',
      'README.md:4: npm/recipes#x (an anchor into npm/recipes, which is not a Markdown page)',
      'README.md:5: ../outside.md (outside the repository)',
      'README.md:6: SECURITY.md#who-may-read (SECURITY.md has no heading #who-may-read)',
      'README.md:10: #not-a-heading (README.md has no heading #not-a-heading)',
    ])
    expect(check('docs/api.md', '[up](README.md)')).toEqual(['docs/api.md:1: README.md (no such file: docs/README.md)'])
  })
})
