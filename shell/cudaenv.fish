# cudaenv's prompt hook for fish. In ~/.config/fish/config.fish:  cudaenv init fish | source
# On each directory change and before each prompt it checks, with builtins only, whether the
# nearest .cudaenv, one of the variables that select a version, or a file cudaenv asked it to watch
# has changed, and only then runs `hook-env` (answered by the small cudaenv-shim program when it is
# installed beside cudaenv, else by cudaenv itself), whose output sets the variables as quoted data.
set -g __cudaenv_bin @CUDAENV_BIN@
contains -- path (builtin -n); and set -g __cudaenv_has_path 1

function __cudaenv_changed
    set -l i 1
    set -l n (count $__cudaenv_watch)
    while test $i -lt $n
        set -l file $__cudaenv_watch[$i]
        set -l stamp $__cudaenv_watch[(math $i + 1)]
        if test -z "$stamp"
            test -e "$file"; and return 0
        else if test "$file" -nt "$stamp"; or test "$file" -ot "$stamp"
            return 0
        end
        set i (math $i + 2)
    end
    return 1
end

function __cudaenv_hook --on-variable PWD --on-event fish_prompt
    set -l dir $PWD
    set -l found ''
    while true
        if test -e "$dir/.cudaenv"
            set found "$dir/.cudaenv"
            break
        end
        if test -z "$dir"; or test "$dir" = /
            break
        end
        # A command substitution splits at newlines: `path dirname -Z` (fish 3.5+) keeps a name
        # holding one whole; older fish stops the walk rather than loop on the pieces.
        if set -q __cudaenv_has_path
            set dir (path dirname -Z -- $dir | string split0)
        else
            set dir (string replace -r '/[^/]*$' '' -- $dir)
        end
        set -q dir[2]; and break
    end
    set -l key "$found|$CUDAENV_VERSION|$CUDAENV_ROOT|$XDG_DATA_HOME|$XDG_CONFIG_HOME|$HOME"
    if test "$key" != "$__cudaenv_key"; or __cudaenv_changed
        $__cudaenv_bin hook-env --shell fish | source
        set -g __cudaenv_key $key
    end
end
