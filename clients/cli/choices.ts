import { Argument, InvalidArgumentError, Option } from "commander";
import { ID_FORMATS, isId, type IdKind } from "../../shared/contract/index.js";

/**
 * Flags and arguments whose value is one of a closed set (a contract enum): the help lists
 * the values, and commander refuses any other with them all named (a usage error, exit 64).
 */
export function choiceOption(flags: string, description: string, values: readonly string[]): Option {
  return new Option(flags, description).choices(values);
}

/** The same, repeatable (`--state queued --state running`): each value is checked, all are kept, none is `[]`. */
export function repeatableChoiceOption(flags: string, description: string, values: readonly string[]): Option {
  return choiceOption(flags, description, values)
    .argParser((value: string, previous: string[]) => {
      if (!values.includes(value)) throw new InvalidArgumentError(`Allowed choices are ${values.join(", ")}.`);
      return [...previous, value];
    })
    .default([]);
}

export function choiceArgument(name: string, description: string, values: readonly string[]): Argument {
  return new Argument(name, description).choices(values);
}

/**
 * The parser of an id argument (`<job>`, `<node>`, …), checked before any request: a value
 * that is not an id of its kind is refused with what such an id looks like.
 */
export function idOf(kind: IdKind): (value: string) => string {
  return (value) => {
    if (!isId(kind, value)) throw new InvalidArgumentError(`It is not ${ID_FORMATS[kind].message}.`);
    return value;
  };
}
