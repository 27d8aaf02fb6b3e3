import { isPlainObject } from '../../shared/validate'
import { type ConfigProblems, pathOf } from '../kit/rules'

// `${NAME}`, or `$${` for a literal `${`. What is between the braces is checked separately, so
// that `${ NAME }` or `${}` is reported rather than left in the value.
const REFERENCE = /\$\$\{|\$\{([^}]*)\}/g
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
const OPEN = '$' + '{'

/**
 * `value` (a parsed config file) with every `"${NAME}"` in its string values replaced by the
 * environment variable `NAME`: a whole value (`"writeKey": "${WEB_WRITE_KEY}"`) or part of one
 * (`"Bearer ${HOOK_TOKEN}"`); `$${` stands for a literal `${`. Keys are never expanded. So a
 * config file can be committed while its secrets stay in the environment.
 *
 * A variable that is unset or empty is a problem naming the field and the variable (never a
 * value); the reference is then left as written, so validation goes on with the rest.
 */
export function expandEnvReferences(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  problems: ConfigProblems,
  field = '',
): unknown {
  if (typeof value === 'string') return expandString(value, env, problems, field)
  if (Array.isArray(value))
    return value.map((item, index) => expandEnvReferences(item, env, problems, `${field}[${index}]`))
  if (isPlainObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, expandEnvReferences(item, env, problems, pathOf(field, key))]),
    )
  }
  return value
}

function expandString(
  value: string,
  env: Readonly<Record<string, string | undefined>>,
  problems: ConfigProblems,
  field: string,
): string {
  return value.replace(REFERENCE, (reference, name: string | undefined) => {
    if (name === undefined) return OPEN
    if (!VARIABLE_NAME.test(name)) {
      problems.add(
        field,
        `holds a ${OPEN}…} that is not an environment reference: write ${OPEN}NAME} with letters, digits and _ only (or $${OPEN} for a literal ${OPEN})`,
      )
      return reference
    }
    const found = env[name]
    if (found === undefined || found === '') {
      problems.add(field, `refers to the environment variable ${name}, which is not set (or is empty)`)
      return reference
    }
    return found
  })
}
