# bash completion for mcprt                                   -*- shell-script -*-
# Installed as share/bash-completion/completions/mcprt; or, in ~/.bashrc:
#   source <(mcprt completion bash)
# Commands, options and their values; server names (`status`, `get`, `remove`, `enable`,
# `disable`, `resources`, `prompts`, `auth …`, `--server`) and tool names (`call`) come from `mcprt __complete servers|tools`,
# which reads the configs and the tool cache only: completing never starts a server.

# The names of $1 (servers | tools) for the configs the command line names so far
# (its --cwd / --config).
_mcprt_names() {
    local -a global=()
    local i w
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        case $w in
            --cwd | --config)
                ((i + 1 < COMP_CWORD)) && global+=("$w" "${COMP_WORDS[i + 1]/#\~/$HOME}")
                ((i++))
                ;;
            --cwd=* | --config=*) global+=("${w/=\~/=$HOME}") ;;
            --) break ;;
        esac
    done
    "${COMP_WORDS[0]/#\~/$HOME}" "${global[@]}" __complete "$1" 2>/dev/null
}

_mcprt() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local commands="list trust untrust tools call search resources read prompts prompt status repl auth add remove get enable disable serve-demo completion"
    local global_opts="--cwd --config --no-cache --elicit --help --version"
    local -a positional=()
    local i w dashes=0
    # The words so far that are neither options nor option values: the command, then its
    # arguments.
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        case $w in
            --)
                dashes=1
                break
                ;;
            --cwd | --config | --elicit | -s | --scope | -t | --transport | -e | --env | -H | --header | --url | --server | \
                --out | --arg | --limit | --port | --web-dir | --js-dir | --demo-server | --demo-startup-delay-ms) ((i++)) ;;
            -*) ;;
            *) positional+=("$w") ;;
        esac
    done
    local cmd=${positional[0]} nargs=$((${#positional[@]} - 1))
    COMPREPLY=()

    # `add … -- <command> [args…]`: the server's command line.
    if ((dashes)); then
        COMPREPLY=($(compgen -f -- "$cur"))
        return
    fi

    case $prev in
        --cwd | --web-dir | --js-dir)
            COMPREPLY=($(compgen -d -- "$cur"))
            return
            ;;
        --config | --demo-server | --out)
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --elicit)
            COMPREPLY=($(compgen -W "ask decline accept-defaults" -- "$cur"))
            return
            ;;
        -s | --scope)
            COMPREPLY=($(compgen -W "user project" -- "$cur"))
            return
            ;;
        -t | --transport)
            COMPREPLY=($(compgen -W "stdio http sse" -- "$cur"))
            return
            ;;
        --server)
            COMPREPLY=($(compgen -W "$(_mcprt_names servers)" -- "$cur"))
            return
            ;;
        -e | --env | -H | --header | --url | --arg | --limit | --port | --demo-startup-delay-ms) return ;;
    esac

    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "$global_opts" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        fi
        return
    fi

    local opts=""
    case $cmd in
        list | tools | status | get | resources | prompts) opts="--json" ;;
        call) opts="--json --server" ;;
        search) opts="--json --limit --server" ;;
        read) opts="--json --server --out" ;;
        prompt) opts="--json --arg" ;;
        add) opts="-s --scope -t --transport -e --env -H --header --url" ;;
        remove) opts="-s --scope" ;;
        auth)
            case ${positional[1]} in
                login) opts="--no-browser" ;;
                status) opts="--json" ;;
            esac
            ;;
        serve-demo) opts="--port --web-dir --js-dir --demo-server --demo-startup-delay-ms" ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts --help $global_opts" -- "$cur"))
        return
    fi

    case $cmd in
        status | get | remove | enable | disable | resources | prompts)
            ((nargs == 0)) && COMPREPLY=($(compgen -W "$(_mcprt_names servers)" -- "$cur"))
            ;;
        call)
            ((nargs == 0)) && COMPREPLY=($(compgen -W "$(_mcprt_names tools)" -- "$cur"))
            ;;
        auth)
            if ((nargs == 0)); then
                COMPREPLY=($(compgen -W "login logout status" -- "$cur"))
            elif ((nargs == 1)); then
                COMPREPLY=($(compgen -W "$(_mcprt_names servers)" -- "$cur"))
            fi
            ;;
        trust | untrust)
            ((nargs == 0)) && COMPREPLY=($(compgen -d -- "$cur"))
            ;;
        completion)
            ((nargs == 0)) && COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur"))
            ;;
    esac
}

complete -F _mcprt mcprt
