# Turn one section of the README into a shell script. The section lies
# between the lines `<!-- walkthrough NAME begin -->` and
# `<!-- walkthrough NAME end -->` (-v name=NAME). In it:
#   ```sh            a block of commands, emitted as they are;
#   ```LANG file=F   a file, emitted as a here-document that writes F;
#   ```text          expected output: each line is written to the file
#                    named by -v expected=PATH, for the runner to find;
# anything else is prose. The section must appear exactly once, and every
# block in it must be closed.
BEGIN { inside = 0; sections = 0; block = "" }
$0 == "<!-- walkthrough " name " begin -->" { inside = 1; sections++; next }
$0 == "<!-- walkthrough " name " end -->" { inside = 0; next }
!inside { next }
block == "" && /^```/ {
    info = substr($0, 4)
    if (info == "sh") {
        block = "sh"
    } else if (match(info, /file=[A-Za-z0-9._-]+/)) {
        block = "file"
        print "cat > '" substr(info, RSTART + 5, RLENGTH - 5) "' <<'ACCEL_WALKTHROUGH_EOF'"
    } else if (info == "text") {
        block = "text"
    } else {
        block = "prose"
    }
    next
}
block != "" && /^```$/ {
    if (block == "file")
        print "ACCEL_WALKTHROUGH_EOF"
    block = ""
    next
}
block == "sh" || block == "file" { print }
block == "text" { print > expected }
END {
    if (sections != 1 || block != "" || inside) {
        print "walkthrough.awk: section '" name "' found " sections \
              " times, or left open" > "/dev/stderr"
        exit 1
    }
}
