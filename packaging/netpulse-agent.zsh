#compdef netpulse-agent
# zsh completion for netpulse-agent (written by hand: the agent parses its options itself).
if (( CURRENT > 2 )) && [[ ${words[2]} == request ]]; then
    _arguments \
        '(-c --config)'{-c,--config}'[the agent config file]:config:_files' \
        '--out[where to write the request]:file:_files' \
        '--group[the group that may read a new key]:group:_groups'
else
    _arguments \
        '1::command:(request)' \
        '(-c --config)'{-c,--config}'[the agent config file]:config:_files' \
        '--check[check the config file and exit]' \
        '--log-level[log level]:level:(trace debug info notice warning error critical)' \
        '--version[show the version]' \
        '(-h --help)'{-h,--help}'[show help information]'
fi
