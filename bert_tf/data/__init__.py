"""Task data: one shared feature-file layer (`features`) and a package per task."""

# The absl verbosity (`--verbosity=1`, `-v 1`) at which the data steps log their
# first examples as the original does at its default (`*** Example ***` blocks).
EXAMPLES_VERBOSITY = 1
