"""A zsh session in a pseudo-terminal (zsh/zpty) that types ``$1`` and a double Tab and prints what zsh
shows until ``$2`` appears: completion tests drive the real shell with it (``zsh -c ZSH_DRIVER``)."""

ZSH_DRIVER = r"""
zmodload zsh/zpty
zpty z "PATH=$PATH TERM=dumb zsh -f -i"
zpty -w z "PS1='> '; fpath=($PWD \$fpath); autoload -U compinit; compinit -u -D; unsetopt beep; print READY"
out=''; for i in {1..100}; do zpty -rt z chunk && out+=$chunk; [[ $out == *READY*'> '* ]] && break; sleep 0.2; done
zpty -wn z "$1"$'\t\t'
out=''; for i in {1..100}; do zpty -rt z chunk && out+=$chunk; [[ $out == *"$2"* ]] && break; sleep 0.2; done
print -r -- "$out"
zpty -d z
"""
