# bash completion for numastor(8)
_numastor() {
	local cur prev words cword
	_init_completion || return

	local commands="check probe trace fix snapshot irqbalance-policy"
	local cmd="" i
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		-*) ;;
		*) cmd=${words[i]}; break ;;
		esac
	done

	if [[ -z $cmd ]]; then
		COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
		return
	fi

	case $cmd in
	fix)
		case $prev in
		--sysroot | -R)
			_filedir -d
			return
			;;
		--snapshot | -s)
			_filedir
			return
			;;
		--color | --colour)
			COMPREPLY=($(compgen -W "auto always never" -- "$cur"))
			return
			;;
		--rq-affinity)
			COMPREPLY=($(compgen -W "2" -- "$cur"))
			return
			;;
		--irqbalance)
			COMPREPLY=($(compgen -W "policy" -- "$cur"))
			return
			;;
		--lock-timeout | --timeout)
			return
			;;
		--module-dir)
			_filedir -d
			return
			;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--dry-run --json --revert --rq-affinity=2 --lock-timeout --hotplug --modules --module-dir --install --timeout --irqbalance=policy --probe --sysroot --snapshot --quiet --verbose --color --help" -- "$cur"))
			return
		fi
		COMPREPLY=($(compgen -W "$(ls /sys/block 2>/dev/null)" -- "$cur"))
		;;
	probe)
		case $prev in
		--duration | -d)
			COMPREPLY=($(compgen -W "1 3 10" -- "$cur"))
			return
			;;
		--iodepth | -Q | -q | --jobs | -J | --nodes | -N)
			return
			;;
		--block-size | -b)
			COMPREPLY=($(compgen -W "512 4k 8k 16k 64k 128k 1m" -- "$cur"))
			return
			;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--duration --block-size --iodepth --jobs --nodes --json --help" -- "$cur"))
			return
		fi
		COMPREPLY=($(compgen -W "$(ls /sys/block 2>/dev/null)" -- "$cur"))
		;;
	trace)
		case $prev in
		--duration | -d)
			COMPREPLY=($(compgen -W "1 10 60" -- "$cur"))
			return
			;;
		--format | -f)
			COMPREPLY=($(compgen -W "text json prometheus" -- "$cur"))
			return
			;;
		--output-file | -O)
			_filedir
			return
			;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--duration --format --json --output-file --verbose --help" -- "$cur"))
			return
		fi
		COMPREPLY=($(compgen -W "$(ls /sys/block 2>/dev/null)" -- "$cur"))
		;;
	snapshot)
		case $prev in
		--sysroot | -R)
			_filedir -d
			return
			;;
		--output-file | -O | --output | -o)
			_filedir
			return
			;;
		esac
		COMPREPLY=($(compgen -W "--output-file --sysroot --help" -- "$cur"))
		;;
	irqbalance-policy)
		case $prev in
		--sysroot | -R)
			_filedir -d
			return
			;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--sysroot --help" -- "$cur"))
			return
		fi
		_filedir -d
		;;
	check)
		case $prev in
		--sysroot | -R)
			_filedir -d
			return
			;;
		--color | --colour)
			COMPREPLY=($(compgen -W "auto always never" -- "$cur"))
			return
			;;
		--format | -f)
			COMPREPLY=($(compgen -W "text json prometheus svg map" -- "$cur"))
			return
			;;
		--output-file | -O | --snapshot | -s)
			_filedir
			return
			;;
		--output | -o)
			# the columns of --list, as cmd/columns.c has them (tests/check-list.py holds them equal);
			# a comma-separated list, "+" first to add to the default ones, any case
			local cols="NAME KIND TRAN PCI DRIVER NODE SOURCE CPUS IRQS MANAGED FIRES QUEUES FINDINGS SEVERITY SIZE MODEL SERIAL BYID" pre=""
			[[ $cur == *,* ]] && pre=${cur%,*},
			[[ -z $pre && $cur == +* ]] && pre=+
			local want=${cur#"$pre"}
			COMPREPLY=($(compgen -P "$pre" -W "$cols" -- "${want^^}"))
			return
			;;
		--interval | -i)
			COMPREPLY=($(compgen -W "1 2 5 10" -- "$cur"))
			return
			;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--json --format --output-file --sysroot --snapshot --interval --all --verbose --list --output --noheadings --raw --pairs --map --color --help" -- "$cur"))
			return
		fi
		local sysroot="" j
		for ((j = 1; j < cword; j++)); do
			[[ ${words[j]} == --sysroot || ${words[j]} == -R ]] && sysroot=${words[j + 1]}
		done
		local devs
		devs=$(ls "${sysroot:-}/sys/block" 2>/dev/null)
		COMPREPLY=($(compgen -W "$devs" -- "$cur"))
		;;
	esac
}
complete -F _numastor numastor
