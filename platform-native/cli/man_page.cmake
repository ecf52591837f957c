# cmake -DHELP2MAN=<help2man> -DCLI=<mcprt> -DINCLUDE=<mcprt.h2m> -DOUT=<mcprt.1> -P man_page.cmake
# The mcprt(1) man page from `mcprt --help` / `--version`. help2man knows no "Exit status:"
# heading (it would nest it in the section before as a subsection): it becomes the
# standard EXIT STATUS section.
set(ENV{NO_COLOR} 1)
set(ENV{COLUMNS} 80)
execute_process(
  COMMAND "${HELP2MAN}" --no-info --section=1 "--name=the MCP runtime for AI agents" "--include=${INCLUDE}"
          "--output=${OUT}.tmp" "${CLI}"
  RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "help2man failed (${failed})")
endif()
file(READ "${OUT}.tmp" page)
string(REPLACE ".SS \"Exit status:\"" ".SH \"EXIT STATUS\"" page "${page}")
file(WRITE "${OUT}" "${page}")
file(REMOVE "${OUT}.tmp")
