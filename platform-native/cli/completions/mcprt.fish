# fish completion for mcprt. Installed as share/fish/vendor_completions.d/mcprt.fish; or:
#   mcprt completion fish > ~/.config/fish/completions/mcprt.fish
# Server names and tool names come from `mcprt __complete servers|tools` (configs and the
# tool cache only: completing never starts a server).

# The words so far that are neither options nor option values (the command first).
function __mcprt_positionals
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l skip 0
    for t in $tokens
        if test $skip = 1
            set skip 0
            continue
        end
        switch $t
            case --
                break
            case --cwd --config --elicit -s --scope -t --transport -e --env -H --header --url --server --out --arg --limit --port --web-dir --js-dir --demo-server --demo-startup-delay-ms
                set skip 1
            case '-*'
            case '*'
                echo $t
        end
    end
end

# True when the command is one of $argv and `n` more words follow it (n = the first arg).
function __mcprt_at
    set -l n $argv[1]
    set -l pos (__mcprt_positionals)
    test (count $pos) -eq (math $n + 1); or return 1
    contains -- $pos[1] $argv[2..-1]
end

function __mcprt_no_command
    test (count (__mcprt_positionals)) -eq 0
end

# The names of $argv[1] (servers | tools), for the command line's --cwd / --config.
function __mcprt_names
    set -l tokens (commandline -opc)
    set -l global
    set -l i 2
    while test $i -le (count $tokens)
        switch $tokens[$i]
            case --cwd --config
                if test $i -lt (count $tokens)
                    set -a global $tokens[$i] $tokens[(math $i + 1)]
                end
                set i (math $i + 1)
            case '--cwd=*' '--config=*'
                set -a global $tokens[$i]
            case --
                break
        end
        set i (math $i + 1)
    end
    command $tokens[1] $global __complete $argv[1] 2>/dev/null
end

complete -c mcprt -f

complete -c mcprt -l cwd -x -a '(__fish_complete_directories)' -d 'Project directory'
complete -c mcprt -l config -r -F -d 'Use only this config file'
complete -c mcprt -l no-cache -d 'Do not read or write the tool cache'
complete -c mcprt -l elicit -x -a 'ask decline accept-defaults' -d 'What a server asking for input gets'
complete -c mcprt -l help -d 'Show the help'
complete -c mcprt -l version -d 'Show the version'

complete -c mcprt -n __mcprt_no_command -a list -d 'List the configured servers (starts nothing)'
complete -c mcprt -n __mcprt_no_command -a trust -d "Trust a project folder's servers"
complete -c mcprt -n __mcprt_no_command -a untrust -d 'Remove the trust of a project folder'
complete -c mcprt -n __mcprt_no_command -a tools -d 'Connect to every server and list their tools'
complete -c mcprt -n __mcprt_no_command -a call -d 'Call one tool'
complete -c mcprt -n __mcprt_no_command -a search -d 'Find the tools for a task (tool search)'
complete -c mcprt -n __mcprt_no_command -a resources -d 'List the resources and resource templates'
complete -c mcprt -n __mcprt_no_command -a read -d 'Read one resource'
complete -c mcprt -n __mcprt_no_command -a prompts -d 'List the prompts and their arguments'
complete -c mcprt -n __mcprt_no_command -a prompt -d "Get a prompt's messages"
complete -c mcprt -n __mcprt_no_command -a status -d "A server's state, error and stderr tail"
complete -c mcprt -n __mcprt_no_command -a repl -d '/mcp commands and tool calls'
complete -c mcprt -n __mcprt_no_command -a auth -d 'OAuth sign-in: login, logout, status'
complete -c mcprt -n __mcprt_no_command -a add -d 'Add a server to a config file'
complete -c mcprt -n __mcprt_no_command -a remove -d 'Remove a server from a config file'
complete -c mcprt -n __mcprt_no_command -a get -d 'Show one server as configured'
complete -c mcprt -n __mcprt_no_command -a enable -d 'Enable a server'
complete -c mcprt -n __mcprt_no_command -a disable -d 'Disable a server'
complete -c mcprt -n __mcprt_no_command -a serve-demo -d 'The web demo page and demo server'
complete -c mcprt -n __mcprt_no_command -a completion -d 'Print a shell completion script'

complete -c mcprt -n '__fish_seen_subcommand_from list tools call search status get resources prompts read prompt' -l json -d 'Print JSON'
complete -c mcprt -n '__mcprt_at 0 status get remove enable disable resources prompts' -a '(__mcprt_names servers)' -d server
complete -c mcprt -n '__mcprt_at 0 call' -a '(__mcprt_names tools)' -d tool
complete -c mcprt -n '__fish_seen_subcommand_from call' -l server -x -a '(__mcprt_names servers)' -d "The tool's server (only it is started)"
complete -c mcprt -n '__fish_seen_subcommand_from search' -l server -x -a '(__mcprt_names servers)' -d "Search only this server's tools (only it is started)"
complete -c mcprt -n '__fish_seen_subcommand_from search' -l limit -x -d 'At most N hits (1-50)'
complete -c mcprt -n '__fish_seen_subcommand_from read' -l server -x -a '(__mcprt_names servers)' -d 'Read it from this server (only it is started)'
complete -c mcprt -n '__fish_seen_subcommand_from read' -l out -r -F -d 'Write the bytes to this file'
complete -c mcprt -n '__fish_seen_subcommand_from prompt' -l arg -x -d 'key=value'
complete -c mcprt -n '__mcprt_at 0 trust untrust' -x -a '(__fish_complete_directories)'
complete -c mcprt -n '__mcprt_at 0 completion' -a 'bash zsh fish'

complete -c mcprt -n '__fish_seen_subcommand_from add remove' -s s -l scope -x -a 'user project' -d 'Which file'
complete -c mcprt -n '__fish_seen_subcommand_from add' -s t -l transport -x -a 'stdio http sse' -d Transport
complete -c mcprt -n '__fish_seen_subcommand_from add' -s e -l env -x -d 'KEY=VALUE (stdio)'
complete -c mcprt -n '__fish_seen_subcommand_from add' -s H -l header -x -d "'Name: value' (http/sse)"
complete -c mcprt -n '__fish_seen_subcommand_from add' -l url -x -d 'The server URL'

complete -c mcprt -n '__mcprt_at 0 auth' -a 'login logout status'
complete -c mcprt -n '__mcprt_at 1 auth' -a '(__mcprt_names servers)' -d server
complete -c mcprt -n '__fish_seen_subcommand_from login' -l no-browser -d 'Only print the URL'

complete -c mcprt -n '__fish_seen_subcommand_from serve-demo' -l port -x -d 'Port of the page'
complete -c mcprt -n '__fish_seen_subcommand_from serve-demo' -l web-dir -x -a '(__fish_complete_directories)'
complete -c mcprt -n '__fish_seen_subcommand_from serve-demo' -l js-dir -x -a '(__fish_complete_directories)'
complete -c mcprt -n '__fish_seen_subcommand_from serve-demo' -l demo-server -r -F
complete -c mcprt -n '__fish_seen_subcommand_from serve-demo' -l demo-startup-delay-ms -x
