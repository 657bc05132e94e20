# Writes OUTPUT (Revision.inc): #define DLC_REVISION "<12-digit commit>",
# with "-dirty" when tracked files differ from it, or "unknown" outside a
# git checkout. Run at every build; the file is rewritten only when its
# text changes, so a commit recompiles the one source that includes it.
set(revision "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE commit RESULT_VARIABLE failed
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT failed)
    set(revision ${commit})
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} diff --quiet HEAD --
                    RESULT_VARIABLE dirty ERROR_QUIET)
    if(dirty)
      set(revision "${commit}-dirty")
    endif()
  endif()
endif()
set(text "#define DLC_REVISION \"${revision}\"\n")
set(old "")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUTPUT} "${text}")
endif()
