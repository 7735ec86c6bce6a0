# fish completion for numastor(8)
complete -c numastor -f
complete -c numastor -n __fish_use_subcommand -a check -d 'report the NUMA locality of every block device'
complete -c numastor -n __fish_use_subcommand -s h -l help -d 'show help'
complete -c numastor -n __fish_use_subcommand -s V -l version -d 'print the version'
complete -c numastor -n '__fish_seen_subcommand_from check' -s j -l json -d 'print one JSON document'
complete -c numastor -n '__fish_seen_subcommand_from check' -s r -l sysroot -r -F -d 'read a captured tree'
complete -c numastor -n '__fish_seen_subcommand_from check' -l color -x -a 'auto always never' -d 'colour the text report'
complete -c numastor -n '__fish_seen_subcommand_from check' -s h -l help -d 'show help'
complete -c numastor -n '__fish_seen_subcommand_from check' -a '(ls /sys/block 2>/dev/null)' -d 'block device'
