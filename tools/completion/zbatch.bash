# SPDX-License-Identifier: GPL-2.0
# bash completion for zbatch, installed by make install. It asks the CLI
# itself (zbatch [CMD...] --help): commands and options are never listed
# twice, so completion cannot drift from the program.
_zbatch() {
	local cur=${COMP_WORDS[COMP_CWORD]} i help words
	local -a path=()
	for ((i = 1; i < COMP_CWORD; i++)); do
		[[ ${COMP_WORDS[i]} == -* ]] || path+=("${COMP_WORDS[i]}")
	done
	help=$("${COMP_WORDS[0]}" "${path[@]}" --help 2>/dev/null) || return 0
	if [[ $cur == -* ]]; then
		words=$(awk '/^  -/ { n = split($1, a, ","); for (i = 1; i <= n; i++) print a[i] }' <<<"$help")
	else
		words=$(awk '/^Subcommands:/ { on = 1; next } on && /^$/ { on = 0 }
			on && /^  [a-z]/ { print $1 }' <<<"$help")
	fi
	mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
}
complete -F _zbatch zbatch
