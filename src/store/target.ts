/** The `--data` value that keeps everything in memory. */
export const IN_MEMORY = ':memory:'

/** Whether a `--data` value names a database that speaks the PostgreSQL protocol rather than a file. */
export const isDatabaseUrl = (data: string) => /^postgres(?:ql)?:\/\//i.test(data)
