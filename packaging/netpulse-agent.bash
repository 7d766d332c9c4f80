# bash completion for netpulse-agent (written by hand: the agent parses its options itself).
_netpulse_agent() {
    local current=${COMP_WORDS[COMP_CWORD]} previous=${COMP_WORDS[COMP_CWORD-1]}
    case $previous in
        -c|--config|--out) mapfile -t COMPREPLY < <(compgen -f -- "$current"); return ;;
        --log-level) mapfile -t COMPREPLY < <(compgen -W "trace debug info notice warning error critical" -- "$current"); return ;;
        --group) mapfile -t COMPREPLY < <(compgen -g -- "$current"); return ;;
    esac
    if [ "${COMP_WORDS[1]}" = request ]; then
        mapfile -t COMPREPLY < <(compgen -W "--config --out --group" -- "$current")
    elif [ "$COMP_CWORD" -eq 1 ]; then
        mapfile -t COMPREPLY < <(compgen -W "request --config --check --log-level --version --help" -- "$current")
    else
        mapfile -t COMPREPLY < <(compgen -W "--config --check --log-level --version --help" -- "$current")
    fi
}
complete -F _netpulse_agent netpulse-agent
