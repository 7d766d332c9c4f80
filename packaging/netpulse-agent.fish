# fish completion for netpulse-agent (written by hand: the agent parses its options itself).
complete -c netpulse-agent -f
complete -c netpulse-agent -n __fish_use_subcommand -a request -d 'Make this host\'s key and a certificate request'
complete -c netpulse-agent -s c -l config -r -F -d 'The agent config file'
complete -c netpulse-agent -n 'not __fish_seen_subcommand_from request' -l check -d 'Check the config file and exit'
complete -c netpulse-agent -n 'not __fish_seen_subcommand_from request' -l log-level -x -a 'trace debug info notice warning error critical' -d 'Log level'
complete -c netpulse-agent -n 'not __fish_seen_subcommand_from request' -l version -d 'Show the version'
complete -c netpulse-agent -n 'not __fish_seen_subcommand_from request' -s h -l help -d 'Show help information'
complete -c netpulse-agent -n '__fish_seen_subcommand_from request' -l out -r -F -d 'Where to write the request'
complete -c netpulse-agent -n '__fish_seen_subcommand_from request' -l group -x -a '(__fish_complete_groups)' -d 'The group that may read a new key'
